"""``stairsense simulate``: write a synthetic sensor log with ground truth."""
from __future__ import annotations

from ._cli_common import check_files, emit, log_output_path
from ._cli_types import MAX_SIMULATED_MINUTES, between, positive, seed_arg


def cmd_simulate(args) -> int:
    from collections import Counter

    from stairsense.stream import Activity, simulate_chunks
    from stairsense.stream.io import write_log_chunks

    out = log_output_path(args.out)
    check_files({"--out": out})
    seen = {"samples": 0, "first_ns": None, "last_ns": None, "steps": Counter()}

    def counted(chunks):
        """The chunks, counted on their way to the file: one chunk in memory at a time."""
        for chunk in chunks:
            if len(chunk):
                seen["samples"] += len(chunk)
                seen["first_ns"] = chunk.t_ns[0] if seen["first_ns"] is None else seen["first_ns"]
                seen["last_ns"] = chunk.t_ns[-1]
            seen["steps"].update(chunk.steps.kind.tolist())
            yield chunk

    path = write_log_chunks(counted(simulate_chunks(minutes=args.minutes, rate_hz=args.rate, seed=args.seed)), out)
    samples = seen["samples"]
    duration_s = float(seen["last_ns"] - seen["first_ns"]) / 1e9 if samples > 1 else 0.0  # as SensorLog.duration_s
    steps = {Activity(k).name.lower(): n for k, n in sorted(seen["steps"].items())}
    payload = {"out": str(path), "samples": samples, "duration_s": duration_s, "rate_hz": args.rate,
               "seed": args.seed, "steps": steps}
    emit(args, payload, f"wrote {path}: {samples} samples, {duration_s / 60:.1f} min at {args.rate:g} Hz, "
                         f"steps {steps}")
    return 0


def add_parser(subparsers) -> None:
    """Register ``stairsense simulate``."""
    p = subparsers.add_parser("simulate", help="write a synthetic sensor log with ground truth",
                       description="Simulate a phone carried by a person (walking, stairs up/down, standing) "
                                   "and write a canonical log plus a .steps.csv ground-truth sidecar.")
    p.add_argument("--minutes", type=positive(float, MAX_SIMULATED_MINUTES, " (a day; a longer log is hours of work and gigabytes of disk)"),
                   default=10.0, help="length of the random activity schedule, at most 1440 (default 10)")
    p.add_argument("--rate", type=between(float, 20, 200, why=" Hz (phone motion sensors)"), default=50.0, metavar="HZ",
                   help="sampling rate, 20-200 Hz (default 50)")
    p.add_argument("--seed", type=seed_arg, default=0, help="random seed; the same seed gives the same log (default 0)")
    p.add_argument("--out", required=True, metavar="LOG", help="output .csv, .csv.gz or .parquet (binary, fastest to replay)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_simulate)
