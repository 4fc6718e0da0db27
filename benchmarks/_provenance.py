"""Which code a results page measured, and whether that code has changed since.

``benchmarks/bench_<topic>.py`` writes ``benchmarks/results/<topic>.md`` (or one
``<topic>_<part>.md`` per part) and declares the code it measures in ``MEASURES``, a tuple of git
pathspecs of this repository. ``_common.write_results`` puts the commit and the exact command on
the page's first line. A page is *fresh* when the code at ``MEASURES`` (and the script itself) is the
same at HEAD as at that commit. ``tests/test_measured_figures.py`` holds the README's figures to
this rule and ``benchmarks/stale.py`` reruns what breaks it.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
RESULTS = BENCHMARKS / "results"
PROVENANCE = re.compile(r'<!-- bench: commit=([0-9a-f]+|unknown)(\+dirty)? command="([^"]*)" -->')


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)


def scripts() -> list[str]:
    """Every benchmark script's file name, sorted."""
    return sorted(p.name for p in BENCHMARKS.glob("bench_*.py"))


def measures(script: str) -> tuple[str, ...]:
    """The repository paths a benchmark measures: its ``MEASURES`` tuple, and the script itself."""
    source = (BENCHMARKS / script).read_text()
    match = re.search(r"^MEASURES\s*=\s*\(([^)]*)\)", source, re.M)
    assert match, f"benchmarks/{script} declares no MEASURES = (...) tuple of the code it measures"
    return (f"benchmarks/{script}", *re.findall(r"[\"']([^\"']+)[\"']", match.group(1)))


def results_pages(script: str) -> list[Path]:
    """The pages ``script`` wrote: those whose first line records a command running it (an ``--out``
    may name any page); for pages without that record, ``bench_<topic>.py`` writes
    ``results/<topic>.md``, or one ``<topic>_<part>.md`` per part."""
    named = sorted(page for page in RESULTS.glob("*.md")
                   if (recorded_command(page) or "").split()[1:2] == [f"benchmarks/{script}"])
    if named:
        return named
    topic = script.removeprefix("bench_").removesuffix(".py")
    page = RESULTS / f"{topic}.md"
    return [page] if page.exists() else sorted(RESULTS.glob(f"{topic}_*.md"))


def produced_at(page: Path) -> str | None:
    """The commit a results page was produced at, or None when it is unknown or was dirty."""
    match = PROVENANCE.search(page.read_text().split("\n", 1)[0])
    if match:
        return None if match.group(1) == "unknown" or match.group(2) else match.group(1)
    return git("log", "-1", "--format=%H", "--", str(page.relative_to(REPO))).stdout.strip() or None


def recorded_command(page: Path) -> str | None:
    """The command the page records on its first line (``python benchmarks/bench_x.py ARGS``)."""
    match = PROVENANCE.search(page.read_text().split("\n", 1)[0])
    return match.group(3) if match else None


def is_fresh(page: Path, paths: tuple[str, ...]) -> bool:
    """Whether the code at ``paths`` is the same at HEAD as at the commit ``page`` was produced at.

    Comparing the trees (not walking the history between them) is what "the figure measured this
    code" means, and merges cannot confuse it.
    """
    commit = produced_at(page)
    if commit is None:
        return False
    return git("diff", "--quiet", commit, "HEAD", "--", *paths).returncode == 0
