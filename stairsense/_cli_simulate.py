"""``stairsense simulate``: write a synthetic sensor log with ground truth."""
from __future__ import annotations

from ._cli_common import check_files, emit, log_output_path
from ._cli_types import MAX_SIMULATED_MINUTES, between, positive, seed_arg


def cmd_simulate(args) -> int:
    from collections import Counter

    from stairsense.stream import Activity, simulate, write_log

    out = log_output_path(args.out)
    check_files({"--out": out})
    log = simulate(minutes=args.minutes, rate_hz=args.rate, seed=args.seed)
    path = write_log(log, out)
    steps = {Activity(k).name.lower(): n for k, n in sorted(Counter(log.steps.kind.tolist()).items())}
    payload = {"out": str(path), "samples": len(log), "duration_s": log.duration_s, "rate_hz": args.rate,
               "seed": args.seed, "steps": steps}
    emit(args, payload, f"wrote {path}: {len(log)} samples, {log.duration_s / 60:.1f} min at {args.rate:g} Hz, "
                         f"steps {steps}")
    return 0


def add_parser(subparsers) -> None:
    """Register ``stairsense simulate``."""
    p = subparsers.add_parser("simulate", help="write a synthetic sensor log with ground truth",
                       description="Simulate a phone carried by a person (walking, stairs up/down, standing) "
                                   "and write a canonical log plus a .steps.csv ground-truth sidecar.")
    p.add_argument("--minutes", type=positive(float, MAX_SIMULATED_MINUTES, " (24 h: the log is held in memory)"),
                   default=10.0, help="length of the random activity schedule, at most 1440 (default 10)")
    p.add_argument("--rate", type=between(float, 20, 200, why=" Hz (phone motion sensors)"), default=50.0, metavar="HZ",
                   help="sampling rate, 20-200 Hz (default 50)")
    p.add_argument("--seed", type=seed_arg, default=0, help="random seed; the same seed gives the same log (default 0)")
    p.add_argument("--out", required=True, metavar="LOG", help="output .csv, .csv.gz or .parquet (binary, fastest to replay)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_simulate)
