"""List the results pages older than the code they measure, and rerun them with their own commands.

A page is stale when the code its benchmark declares in ``MEASURES`` changed after the commit on
the page's first line (``_provenance``); the README's rows must then say "stale" until it is rerun
(``tests/test_measured_figures.py``). Each page is rerun with the exact command it records, so a
rerun measures what the page says it measured, arguments and all (``make bench``).

The benchmarks run one at a time: several at once on a 2-core machine slow each other, and a
timing benchmark sharing the cores would time the other. The timed ones run last, and
``bench_energy.py`` after ``bench_android_core.py``, whose page it reads.

Examples::

    python benchmarks/stale.py            # what is stale, and the command that reruns each
    python benchmarks/stale.py --run      # rerun every stale page, then say what is still stale
    python benchmarks/stale.py --json
"""
from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time

from _provenance import REPO, is_fresh, measures, recorded_command, results_pages, scripts

#: Benchmarks whose figures are times: run after every other, in this order (energy prices the
#: Java core's timings from bench_android_core's page).
TIMED_LAST = ("bench_log_formats.py", "bench_read.py", "bench_export.py", "bench_startup.py", "bench_frontend.py",
              "bench_android_core.py", "bench_energy.py")


def stale_commands() -> list[tuple[str, str, list[str]]]:
    """(script, command, its stale pages) for every benchmark with a stale page, each distinct
    command once, in the order they should run (:data:`TIMED_LAST` last)."""
    found: dict[tuple[str, str], list[str]] = {}
    for script in scripts():
        paths = measures(script)
        for page in results_pages(script):
            if not is_fresh(page, paths):
                command = recorded_command(page) or f"python benchmarks/{script}"
                found.setdefault((script, command), []).append(str(page.relative_to(REPO)))

    def order(item):
        script = item[0][0]
        return (TIMED_LAST.index(script) + 1 if script in TIMED_LAST else 0, script)

    return [(script, command, pages) for (script, command), pages in sorted(found.items(), key=order)]


def run(command: str) -> int:
    """Run a recorded ``python benchmarks/...`` command with this interpreter, from the repository."""
    argv = shlex.split(command)
    if argv[0] == "python":
        argv[0] = sys.executable
    return subprocess.run(argv, cwd=REPO, stdout=subprocess.DEVNULL).returncode


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", action="store_true", help="rerun every stale page with its recorded command")
    parser.add_argument("--json", action="store_true", help="print the stale pages as JSON")
    args = parser.parse_args(argv)
    stale = stale_commands()
    if args.json:
        print(json.dumps([{"script": s, "command": c, "pages": p} for s, c, p in stale], indent=2))
    else:
        for _, command, pages in stale:
            print(f"{command}    # {', '.join(pages)}")
        print(f"{len(stale)} stale benchmark command(s)" if stale else "every results page is fresh")
    if not args.run:
        return 0
    for i, (_, command, _) in enumerate(stale, 1):
        print(f"[{i}/{len(stale)}] {command}", flush=True)
        started = time.perf_counter()
        code = run(command)
        print(f"    exit {code} after {time.perf_counter() - started:.0f} s", flush=True)
        if code:
            return code
    left = stale_commands()
    if left:
        print("still stale (commit the code, then rerun: a page written on a modified tree is marked dirty):")
        for _, command, pages in left:
            print(f"  {command}    # {', '.join(pages)}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
