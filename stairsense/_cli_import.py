"""``stairsense import``: other apps' files to a canonical log, with a column mapping or a preset."""
from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from ._cli_common import check_files, emit, log_output_path

MAP_HELP = ("column mapping NAME=COLUMN[:UNIT],... e.g. 't=timestamp:ms,ax=accX:g,ay=accY:g,az=accZ:g'; units: "
            "time ns/us/ms/s, acceleration m/s2/g, angular rate rad/s/deg/s, air pressure p hPa/mbar/Pa/kPa/bar, a leading "
            "'-' flips the sign (iOS CoreMotion: ax=x:-g); COLUMN may be A+B (summed) or STEM.COLUMN (column of "
            "STEM.csv)")
# The tables of a mapping file; a preset holds the same fields (stairsense.stream.io.ImportPreset).
_MAP_FILE_KEYS = {"columns", "meta", "records", "optional"}


def _mapping_file(path) -> dict:
    """The fields of a TOML mapping file: ``[columns]``, and optionally ``[meta]``, ``[records]``, ``optional``."""
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
    optional = data.get("optional", [])
    if not (isinstance(optional, list) and all(isinstance(g, str) for g in optional)):
        raise ValueError(f"--map-file {path}: optional must be a list of groups, e.g. optional = [\"gyro\", \"pressure\"]")
    unknown = sorted(set(data) - _MAP_FILE_KEYS)
    if unknown:
        raise ValueError(f"--map-file {path}: unknown table(s) {unknown}; a mapping file has [columns] and optionally "
                         "[meta], [records] and optional = [...]")
    return {"columns": columns, "meta": meta, "records": data.get("records"), "optional": optional}


def _spec(args) -> tuple[dict, str]:
    """The mapping fields to import with, and the flag that gave them (for errors)."""
    from stairsense.stream.io import IMPORT_PRESETS

    given = [flag for flag, value in (("--preset", args.preset), ("--map", args.map), ("--map-file", args.map_file))
             if value is not None]
    if len(given) != 1:
        raise ValueError("give the column mapping with --preset NAME, --map \"t=...,ax=...\" or --map-file FILE.toml "
                         f"(one of them; got {' and '.join(given) or 'none'})")
    if args.preset is not None:
        preset = IMPORT_PRESETS[args.preset]
        return {"columns": dict(preset.columns), "meta": {**preset.meta, "import_preset": args.preset},
                "records": None if preset.records is None else dict(preset.records),
                "optional": list(preset.optional)}, f"--preset {args.preset}"
    if args.map is not None:
        return {"columns": args.map}, "--map"
    return _mapping_file(args.map_file), f"--map-file {args.map_file}"


def cmd_import(args) -> int:
    from stairsense.stream import import_log, write_log

    out = log_output_path(args.out)
    sources = [Path(s) for s in args.sources]
    check_files({"--out": out}, {"SRC": sources, "--map-file": args.map_file})
    spec, where = _spec(args)
    try:
        log, report = import_log(sources, spec["columns"], repair=args.repair, meta=spec.get("meta"),
                                 records=spec.get("records"), optional=spec.get("optional", ()))
    except ValueError as exc:
        message = str(exc)
        raise ValueError(message if message.startswith(tuple(str(s) for s in sources)) else f"{where}: {message}") from exc
    path = write_log(log, out)
    payload = {"out": str(path), **report.to_dict(), "duration_s": log.duration_s, "rate_hz": log.rate_hz}
    emit(args, payload, "\n".join([f"wrote {path}: {len(log)} samples, {log.duration_s:.1f} s at "
                                   f"{log.rate_hz:.1f} Hz", *report.lines()]))
    return 0


def add_parser(subparsers) -> None:
    """Register ``stairsense import``."""
    from stairsense.stream.io import IMPORT_PRESETS

    description = ("Read the files of another recording app with a preset or a column mapping, convert units and "
                   "sign conventions (Android m/s², g, iOS CoreMotion; air pressure to hPa), merge streams recorded "
                   "at their own rates (separate files, record types, a column filled on some rows) onto the "
                   "accelerometer's timestamps (linear interpolation, never extrapolation) and write a canonical log. "
                   "Everything converted, merged, left out or dropped is reported.")
    presets = "\n".join(textwrap.fill(preset.description, 79, initial_indent=f"  {name:<19}", subsequent_indent=" " * 21)
                        for name, preset in IMPORT_PRESETS.items())
    p = subparsers.add_parser(
        "import", help="convert another app's files (one, one per sensor, or an export folder) to a canonical log",
        description=textwrap.fill(description, 79), formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"presets (--preset NAME):\n{presets}")
    p.add_argument("sources", nargs="+", metavar="SRC", help="the app's files (.csv, .txt, .gz) or its export folder")
    p.add_argument("--out", required=True, metavar="LOG", help="canonical log to write (.csv, .csv.gz or .parquet)")
    p.add_argument("--preset", choices=list(IMPORT_PRESETS), metavar="NAME",
                   help=f"a ready mapping for an app's export, one of {', '.join(IMPORT_PRESETS)} (below)")
    p.add_argument("--map", metavar="SPEC", help=MAP_HELP)
    p.add_argument("--map-file", metavar="TOML", help="the mapping as TOML: a [columns] table (ax = \"accX:g\"), an "
                   "optional [meta] table (device, subject, ...), optional = [\"gyro\", \"pressure\"] (groups to leave "
                   "out when absent) and, for files of typed lines, [records] (delimiter, comment, [records.types] "
                   "TYPE = \"col,col,...\")")
    p.add_argument("--repair", nargs="+", choices=["dedupe", "sort"], default=[], metavar="REPAIR",
                   help="fix the sources' timestamps instead of failing, each fix reported: dedupe, sort")
    p.add_argument("--json", action="store_true", help="print the import report as JSON")
    p.set_defaults(func=cmd_import)
