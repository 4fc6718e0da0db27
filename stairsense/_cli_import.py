"""``stairsense import``: other apps' CSV files to a canonical log, with a column mapping."""
from __future__ import annotations

from pathlib import Path

from ._cli_common import check_files, emit, log_output_path

MAP_HELP = ("column mapping NAME=COLUMN[:UNIT],... e.g. 't=timestamp:ms,ax=accX:g,ay=accY:g,az=accZ:g'; units: "
            "time ns/us/ms/s, acceleration m/s2/g, angular rate rad/s/deg/s, a leading '-' flips the sign "
            "(iOS CoreMotion: ax=x:-g); COLUMN may be A+B (summed) or STEM.COLUMN (column of STEM.csv)")


def _mapping_file(path) -> tuple[dict, dict]:
    """``[columns]`` and optional ``[meta]`` of a TOML mapping file."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the same parser from PyPI
        import tomli as tomllib

    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise ValueError(f"--map-file {path}: cannot read the mapping file ({exc.strerror}); check the path") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"--map-file {path}: not valid TOML ({exc}); see `stairsense import --help` for the format") from exc
    columns, meta = data.get("columns"), data.get("meta", {})
    if not isinstance(columns, dict) or not columns or not all(isinstance(v, str) for v in columns.values()):
        raise ValueError(f"--map-file {path}: a mapping file needs a [columns] table of NAME = \"COLUMN[:UNIT]\" strings, "
                         "e.g. ax = \"accX:g\"")
    if not isinstance(meta, dict):
        raise ValueError(f"--map-file {path}: [meta] must be a table of provenance (device = \"...\", subject = \"...\")")
    unknown = sorted(set(data) - {"columns", "meta"})
    if unknown:
        raise ValueError(f"--map-file {path}: unknown table(s) {unknown}; a mapping file has [columns] and optionally [meta]")
    return columns, meta


def cmd_import(args) -> int:
    from stairsense.stream import import_log, write_log

    out = log_output_path(args.out)
    sources = [Path(s) for s in args.sources]
    check_files({"--out": out}, {"SRC": sources, "--map-file": args.map_file})
    if (args.map is None) == (args.map_file is None):
        raise ValueError("give the column mapping with --map \"t=...,ax=...\" or --map-file FILE.toml (one of them)")
    mapping, meta = (args.map, {}) if args.map is not None else _mapping_file(args.map_file)
    try:
        log, report = import_log(sources, mapping, repair=args.repair, meta=meta)
    except ValueError as exc:
        where = f"--map-file {args.map_file}" if args.map_file else "--map"
        message = str(exc)
        raise ValueError(message if message.startswith(tuple(str(s) for s in sources)) else f"{where}: {message}") from exc
    path = write_log(log, out)
    payload = {"out": str(path), **report.to_dict(), "duration_s": log.duration_s, "rate_hz": log.rate_hz}
    emit(args, payload, "\n".join([f"wrote {path}: {len(log)} samples, {log.duration_s:.1f} s at "
                                   f"{log.rate_hz:.1f} Hz", *report.lines()]))
    return 0


def add_parser(subparsers) -> None:
    """Register ``stairsense import``."""
    p = subparsers.add_parser(
        "import", help="convert another app's CSV files (one or one per sensor) to a canonical log",
        description="Read CSV files from another recording app with a column mapping, convert units and sign "
                    "conventions (Android m/s², g, iOS CoreMotion), merge separate sensor files onto the "
                    "accelerometer's timestamps (linear interpolation, never extrapolation) and write a "
                    "canonical log. Everything converted, merged or dropped is reported.")
    p.add_argument("sources", nargs="+", metavar="SRC", help="CSV files with a header line (.csv, .txt, .gz)")
    p.add_argument("--out", required=True, metavar="LOG", help="canonical log to write (.csv, .csv.gz or .parquet)")
    p.add_argument("--map", metavar="SPEC", help=MAP_HELP)
    p.add_argument("--map-file", metavar="TOML", help="the mapping as TOML: a [columns] table (ax = \"accX:g\") "
                   "and an optional [meta] table (device, subject, ...)")
    p.add_argument("--repair", nargs="+", choices=["dedupe", "sort"], default=[], metavar="REPAIR",
                   help="fix the sources' timestamps instead of failing, each fix reported: dedupe, sort")
    p.add_argument("--json", action="store_true", help="print the import report as JSON")
    p.set_defaults(func=cmd_import)
