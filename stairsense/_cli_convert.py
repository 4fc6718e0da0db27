"""``stairsense convert``: rewrite a sensor log between CSV (.csv/.csv.gz) and Parquet (.parquet)."""
from __future__ import annotations

from ._cli_common import check_files, emit, repair_summary

_SUFFIXES = (".csv", ".csv.gz", ".parquet")


def _check_name(path: str, role: str) -> None:
    if not path.endswith(_SUFFIXES):
        raise ValueError(f"{path}: the {role} log must end in .csv, .csv.gz or .parquet (the suffix picks the format)")


def cmd_convert(args) -> int:
    from stairsense.stream import convert_log

    _check_name(args.log, "input")
    _check_name(args.out, "output")
    check_files({"OUT": args.out}, {"LOG": args.log})
    samples, read = convert_log(args.log, args.out, repair=tuple(args.repair or ()), report=True)
    emit(args, {"log": args.log, "out": args.out, "samples": samples, "read": read.to_dict()},
         "\n".join([f"wrote {args.out}: {samples} samples from {args.log}", *repair_summary(read.to_dict())]))
    return 0


def add_parser(subparsers) -> None:
    """Register ``stairsense convert``."""
    p = subparsers.add_parser(
        "convert", help="rewrite a log between CSV and the binary Parquet format (fastest to replay)",
        description="Read a sensor log with every check `replay` applies and write it in the format its name "
                    "asks for: .csv, .csv.gz or .parquet. The steps sidecar (.steps.csv) is copied beside the "
                    "output. Values round-trip exactly in both directions.")
    p.add_argument("log", metavar="LOG", help="input log (.csv, .csv.gz or .parquet)")
    p.add_argument("out", metavar="OUT", help="output log (.csv, .csv.gz or .parquet)")
    p.add_argument("--repair", nargs="+", choices=["drop-nan", "drop-impossible"], metavar="REPAIR",
                   help="fix instead of failing: drop-nan (samples with nan/inf are left out), drop-impossible "
                        "(samples with values beyond any phone sensor are left out)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_convert)
