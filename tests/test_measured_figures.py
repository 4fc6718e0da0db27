"""The README's "Measured" table is true to the results files, and no figure is older than its code.

Each row names its benchmark script(s) in the last column; ``benchmarks/bench_<topic>.py`` writes
``benchmarks/results/<topic>.md`` and declares the code it measures in ``MEASURES`` (paths of this
repository). A figure is *fresh* when that code is the same at HEAD as at the commit the results
page was produced at (its provenance comment, written by ``benchmarks/_common.write_results``; else
the commit that last changed the page). A stale figure must say so in its row ("stale"), so a
reader never takes an old number for the code in front of them.
"""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from _provenance import git, is_fresh, measures, results_pages  # noqa: E402

NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def measured_rows() -> list[tuple[str, str, list[str]]]:
    """(what, result cell, benchmark script names) for every row of README's "## Measured" table."""
    text = (REPO / "README.md").read_text()
    section = text.split("\n## Measured", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or cells[0] in ("what", "") or set(cells[0]) <= set("-: "):
            continue
        rows.append((cells[0], cells[1], re.findall(r"bench_\w+\.py", cells[-1])))
    return rows


ROWS = measured_rows()


def test_the_measured_table_is_found():
    assert len(ROWS) >= 10, "README.md lost its '## Measured' table (or the parser broke)"


@pytest.mark.parametrize("what, result, scripts", ROWS, ids=[r[0][:40] for r in ROWS])
def test_every_figure_appears_in_its_results_page(what, result, scripts):
    assert scripts, f"row {what!r} names no benchmarks/bench_*.py script"
    pages = [page for s in scripts for page in results_pages(s)]
    for script in scripts:
        assert results_pages(script), f"row {what!r}: benchmarks/{script} has no results page; run it"
    text = " ".join(p.read_text() for p in pages).replace("−", "-")
    for figure in NUMBER.findall(result.replace("−", "-")):
        assert figure in text, (f"row {what!r}: figure {figure} is in README.md but in none of "
                                f"{[str(p.relative_to(REPO)) for p in pages]}")


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs the git history")
@pytest.mark.parametrize("what, result, scripts", ROWS, ids=[r[0][:40] for r in ROWS])
def test_no_figure_is_older_than_its_code_unless_marked_stale(what, result, scripts):
    if git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("shallow clone: the history that dates a figure is missing")
    stale = [s for s in scripts if not all(is_fresh(page, measures(s)) for page in results_pages(s))]
    if stale:
        assert "stale" in result.lower(), (
            f"row {what!r}: {stale} measured code that has changed since; rerun "
            f"{' and '.join('python benchmarks/' + s for s in stale)} and commit the results (or mark the row stale)")
    else:
        assert "stale" not in result.lower(), f"row {what!r} is marked stale but its results are fresh"


def test_a_stale_page_is_detected(tmp_path):
    """The freshness rule fails on a page produced before its code changed (the oracle: git's own history)."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs the git history")
    first = git("rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    page = tmp_path / "x.md"
    page.write_text(f'<!-- bench: commit={first} command="python benchmarks/bench_x.py" -->\n')
    assert not is_fresh(page, ("stream/",))
    head = git("rev-parse", "HEAD").stdout.strip()
    page.write_text(f'<!-- bench: commit={head} command="python benchmarks/bench_x.py" -->\n')
    assert is_fresh(page, ("stream/",))
    page.write_text(f'<!-- bench: commit={head}+dirty command="python benchmarks/bench_x.py" -->\n')
    assert not is_fresh(page, ("stream/",))

    # ":!" excludes a path a benchmark never runs (a log reader for a benchmark that reads no log file).
    page.write_text(f'<!-- bench: commit={first} command="python benchmarks/bench_x.py" -->\n')
    assert is_fresh(page, ("stream/", ":!stream/"))


def test_stale_lists_each_stale_command_once_timed_last(monkeypatch, tmp_path):
    """``benchmarks/stale.py`` reruns a stale page with the command on its first line, each command
    once however many pages it wrote, and the timed benchmarks after the rest, energy after the
    Java core whose page it reads."""
    import stale

    pages = {}
    for script, names, command in [("bench_energy.py", ["energy.md"], "python benchmarks/bench_energy.py"),
                                   ("bench_android_core.py", ["android_core.md"], "python benchmarks/bench_android_core.py --hours 24"),
                                   ("bench_okl.py", ["okl_a.md", "okl_b.md"], "python benchmarks/bench_okl.py"),
                                   ("bench_rls2.py", ["rls2.md"], None)]:
        pages[script] = []
        for name in names:
            page = tmp_path / name
            header = f'<!-- bench: commit=unknown command="{command}" -->' if command else "no header"
            page.write_text(header + "\n")
            pages[script].append(page)
    monkeypatch.setattr(stale, "REPO", tmp_path)
    monkeypatch.setattr(stale, "scripts", lambda: sorted(pages))
    monkeypatch.setattr(stale, "results_pages", lambda script: pages[script])
    monkeypatch.setattr(stale, "measures", lambda script: (f"benchmarks/{script}",))
    monkeypatch.setattr(stale, "is_fresh", lambda page, paths: False)
    assert stale.stale_commands() == [
        ("bench_okl.py", "python benchmarks/bench_okl.py", ["okl_a.md", "okl_b.md"]),
        ("bench_rls2.py", "python benchmarks/bench_rls2.py", ["rls2.md"]),
        ("bench_android_core.py", "python benchmarks/bench_android_core.py --hours 24", ["android_core.md"]),
        ("bench_energy.py", "python benchmarks/bench_energy.py", ["energy.md"])]
    monkeypatch.setattr(stale, "is_fresh", lambda page, paths: page.name != "okl_b.md")
    assert stale.stale_commands() == [("bench_okl.py", "python benchmarks/bench_okl.py", ["okl_b.md"])]
