"""``stairsense simulate``: write a synthetic sensor log with ground truth."""
from __future__ import annotations

from ._cli_common import check_files, emit, log_output_path
from ._cli_types import MAX_SIMULATED_MINUTES, between, positive, seed_arg

# The simulator's placements (stairsense.stream.simulate.PLACEMENTS, which would load NumPy into every
# --help; tests/test_cli.py keeps the two the same).
SIMULATED_PLACEMENTS = ("trouser_pocket", "jacket_pocket", "waist", "hand", "armband", "wrist", "bag")


def cmd_simulate(args) -> int:
    from collections import Counter

    import numpy as np

    from stairsense.stream import Activity, Barometer, Person, building_walk, simulate_chunks
    from stairsense.stream.io import write_log_chunks

    out = log_output_path(args.out)
    check_files({"--out": out})
    if args.scenario == "building":
        if args.minutes is not None:
            raise ValueError("--minutes sets the length of a random day; a --scenario building walk is as long as "
                             "its floors take: drop --minutes or use --scenario day")
        rng = np.random.default_rng(args.seed)
        schedule, person = building_walk(Person.draw(rng), rng)
        length = dict(schedule=schedule, person=person)
    else:
        length = dict(minutes=10.0 if args.minutes is None else args.minutes)
    barometer = None if args.barometer is None else Barometer(rate_hz=args.barometer)
    seen = {"samples": 0, "first_ns": None, "last_ns": None, "steps": Counter(), "placement": args.placement}

    def counted(chunks):
        """The chunks, counted on their way to the file: one chunk in memory at a time."""
        for chunk in chunks:
            if len(chunk):
                seen["samples"] += len(chunk)
                seen["first_ns"] = chunk.t_ns[0] if seen["first_ns"] is None else seen["first_ns"]
                seen["last_ns"] = chunk.t_ns[-1]
            seen["steps"].update(chunk.steps.kind.tolist())
            seen["placement"] = chunk.meta["placement"]
            yield chunk

    chunks = simulate_chunks(**length, rate_hz=args.rate, seed=args.seed, placement=args.placement, barometer=barometer)
    path = write_log_chunks(counted(chunks), out)
    samples = seen["samples"]
    duration_s = float(seen["last_ns"] - seen["first_ns"]) / 1e9 if samples > 1 else 0.0  # as SensorLog.duration_s
    steps = {Activity(k).name.lower(): n for k, n in sorted(seen["steps"].items())}
    payload = {"out": str(path), "samples": samples, "duration_s": duration_s, "rate_hz": args.rate,
               "seed": args.seed, "scenario": args.scenario, "placement": seen["placement"], "barometer_hz": args.barometer,
               "steps": steps}
    pressure = "" if args.barometer is None else f", pressure at {args.barometer:g} Hz"
    emit(args, payload, f"wrote {path}: {samples} samples, {duration_s / 60:.1f} min at {args.rate:g} Hz{pressure}, "
                         f"{seen['placement']}, steps {steps}")
    return 0


def add_parser(subparsers) -> None:
    """Register ``stairsense simulate``."""
    p = subparsers.add_parser("simulate", help="write a synthetic sensor log with ground truth",
                       description="Simulate a phone carried by a person (walking, stairs up/down, standing; "
                                   "with --scenario building also lifts, escalators and ramps between floors) "
                                   "and write a canonical log plus a .steps.csv ground-truth sidecar.")
    p.add_argument("--minutes", type=positive(float, MAX_SIMULATED_MINUTES, " (a day; a longer log is hours of work and gigabytes of disk)"),
                   default=None, help="length of the random day, at most 1440 (default 10; not with --scenario building)")
    p.add_argument("--scenario", choices=("day", "building"), default="day",
                   help="day: a random schedule of walking, stairs and standing (default); building: a walk of "
                        "four legs between floors (3 m) by stairs, lift, escalator or ramp, its length set by them")
    p.add_argument("--barometer", type=between(float, 1, 25, why=" Hz (phone barometers)"), default=None, metavar="HZ",
                   help="add air pressure (column p, hPa) from a phone barometer read at 1-25 Hz: noise, offset, "
                        "rounding, weather drift, doors and warming (default: no pressure)")
    p.add_argument("--placement", choices=SIMULATED_PLACEMENTS, default=None,
                   help="where the phone is carried (default: drawn from the seed)")
    p.add_argument("--rate", type=between(float, 20, 200, why=" Hz (phone motion sensors)"), default=50.0, metavar="HZ",
                   help="sampling rate, 20-200 Hz (default 50)")
    p.add_argument("--seed", type=seed_arg, default=0, help="random seed; the same seed gives the same log (default 0)")
    p.add_argument("--out", required=True, metavar="LOG", help="output .csv, .csv.gz or .parquet (binary, fastest to replay)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_simulate)
