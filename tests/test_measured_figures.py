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
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
RESULTS = BENCHMARKS / "results"
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
PROVENANCE = re.compile(r'<!-- bench: commit=([0-9a-f]+|unknown)(\+dirty)? command="[^"]*" -->')


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


def measures(script: str) -> tuple[str, ...]:
    """The repository paths a benchmark measures: its ``MEASURES`` tuple, and the script itself."""
    source = (BENCHMARKS / script).read_text()
    match = re.search(r"^MEASURES\s*=\s*\(([^)]*)\)", source, re.M)
    assert match, f"benchmarks/{script} declares no MEASURES = (...) tuple of the code it measures"
    return (f"benchmarks/{script}", *re.findall(r"[\"']([^\"']+)[\"']", match.group(1)))


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)


def produced_at(page: Path) -> str | None:
    """The commit a results page was produced at, or None when it is unknown or was dirty."""
    match = PROVENANCE.search(page.read_text().split("\n", 1)[0])
    if match:
        return None if match.group(1) == "unknown" or match.group(2) else match.group(1)
    return git("log", "-1", "--format=%H", "--", str(page.relative_to(REPO))).stdout.strip() or None


def is_fresh(page: Path, paths: tuple[str, ...]) -> bool:
    """Whether the code at ``paths`` is the same at HEAD as at the commit ``page`` was produced at.

    Comparing the trees (not walking the history between them) is what "the figure measured this
    code" means, and merges cannot confuse it.
    """
    commit = produced_at(page)
    if commit is None:
        return False
    return git("diff", "--quiet", commit, "HEAD", "--", *paths).returncode == 0


def results_pages(script: str) -> list[Path]:
    """``bench_<topic>.py`` writes ``results/<topic>.md``, or one ``<topic>_<part>.md`` per part."""
    topic = script.removeprefix("bench_").removesuffix(".py")
    page = RESULTS / f"{topic}.md"
    return [page] if page.exists() else sorted(RESULTS.glob(f"{topic}_*.md"))


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
