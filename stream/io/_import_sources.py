"""Other apps' files as tables of named columns for :func:`~stairsense.stream.import_log` (``_import``).

Two layouts, one table per *source*:

* a CSV file with a header line (comma, semicolon or tab separated, optional UTF-8 BOM, ``.gz``
  allowed): one source named by the file's stem (``Gyroscope`` for ``Gyroscope.csv``). A folder
  stands for its files that the mapping names by stem (``Gyroscope.x``), or every ``.csv`` file in it
  when the mapping names none;
* a header-less file of typed records (a :func:`parse_records` layout), one line per sample whose
  first field names its type, as GetSensorData writes ``ACCE;AppTimestamp;SensorTimestamp;x;y;z;...``:
  one source per record type the layout names (``ACCE``), its columns named by the layout. Lines of
  other types and comment lines are skipped and counted.

Every row keeps its file line, for errors. Empty cells (and ``NaN``, Arrow's null markers) become
nulls: the merge decides what a missing value means.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ._csv_format import _META_PREFIX
from ._csv_parse import parse_meta

__all__ = ["parse_records"]

_DELIMITERS = (",", ";", "\t")
_FILE_SUFFIXES = (".csv", ".csv.gz", ".txt", ".txt.gz")


@dataclass
class Source:
    """One table of named columns and where its rows came from."""

    path: Path
    table: pa.Table
    name: str  # what ``NAME.COLUMN`` qualifies by: the file's stem, or the record type
    lines: np.ndarray | None = None  # file line of each row; None: consecutive from the line after the header
    from_folder: bool = False  # found in a folder rather than named: left out, not refused, when unused
    first_line: int = 2  # file line of row 0 when ``lines`` is None
    meta: dict | None = None  # a canonical log's ``# meta:`` line, which the import keeps

    @property
    def columns(self) -> list[str]:
        return self.table.column_names

    @property
    def label(self) -> str:
        """The source in messages: the file, and the record type for a record file."""
        return str(self.path) if self.name == _stem(self.path) else f"{self.path} ({self.name} lines)"

    def line(self, row: int) -> int:
        return int(self.lines[row]) if self.lines is not None else self.first_line + int(row)


@dataclass(frozen=True)
class RecordLayout:
    """Header-less files of typed lines (see :func:`parse_records`)."""

    types: dict[str, tuple[str, ...]]
    delimiter: str
    comment: str


def _stem(path: Path) -> str:
    return path.name.split(".")[0]


def parse_records(spec) -> RecordLayout | None:
    """Check a record layout: ``{"types": {TYPE: "col,col,...", ...}, "delimiter": ";", "comment": "%"}``.

    ``types`` names each record type's columns in line order, the type field first (a list of names
    or one comma-separated string); ``delimiter`` (default ``;``) separates fields and lines starting
    with ``comment`` (default ``%``) are skipped. None passes through (files with a header line).

    Examples
    --------
    >>> parse_records({"types": {"PRES": "type,app_s,t_s,pressure,accuracy"}}).types
    {'PRES': ('type', 'app_s', 't_s', 'pressure', 'accuracy')}
    """
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise ValueError(f"a record layout is a table with 'types' (and optionally 'delimiter', 'comment'), got {spec!r}")
    unknown = sorted(set(spec) - {"types", "delimiter", "comment"})
    if unknown:
        raise ValueError(f"a record layout has 'types', 'delimiter' and 'comment'; unknown key(s) {unknown}")
    delimiter, comment = spec.get("delimiter", ";"), spec.get("comment", "%")
    if not (isinstance(delimiter, str) and len(delimiter) == 1):
        raise ValueError(f"the record delimiter must be one character, got {delimiter!r}")
    if not isinstance(comment, str):
        raise ValueError(f"the record comment prefix must be a string, got {comment!r}")
    types = spec.get("types")
    if not isinstance(types, dict) or not types:
        raise ValueError("a record layout needs 'types': record type -> its column names, e.g. "
                         "ACCE = \"type,app_s,t_s,x,y,z,accuracy\"")
    checked = {}
    for kind, names in types.items():
        names = names.split(",") if isinstance(names, str) else names
        if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"record type {kind!r}: name its columns as a list or a comma-separated string")
        names = tuple(n.strip() for n in names)
        if len(names) < 2 or not all(names) or len(set(names)) != len(names):
            raise ValueError(f"record type {kind!r}: columns {list(names)} must be at least two distinct, non-empty "
                             "names (the type field first)")
        if delimiter in kind:
            raise ValueError(f"record type {kind!r} contains the delimiter {delimiter!r}")
        checked[str(kind)] = names
    return RecordLayout(checked, delimiter, comment)


def read_sources(paths, layout: RecordLayout | None, value_columns: set[str],
                 stems: set[str]) -> tuple[list[Source], list[str]]:
    """The sources of ``paths`` (record files when ``layout`` is given, else CSV files with a header
    line) and, per record file, the lines it skipped: ``"PATH: 9239 AHRS lines, 1155 LIGH lines (...)"``.

    ``value_columns`` (the names the mapping reads values from) are parsed as float64, so a column
    whose first rows are empty is not taken for text; ``stems`` (the ``STEM.`` qualifiers the mapping
    uses) pick a folder's files.
    """
    sources, skipped = [], []
    for raw in paths:
        path = Path(raw)
        if layout is not None:
            found, counts = _read_records(_file(path, "the app's log file"), layout, value_columns)
            sources += found
            if counts:
                skipped.append(f"{path}: " + ", ".join(f"{n} {kind} lines" for kind, n in
                                                       sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
                               + " (record types the layout does not read)")
        elif path.is_dir():
            sources += [_read_csv(p, value_columns, from_folder=True) for p in _folder_files(path, stems)]
        else:
            sources.append(_read_csv(_file(path, "a CSV file exported by the recording app"), value_columns))
    if not sources:
        raise ValueError("no source files given" if not paths else
                         f"{paths[0]}: no line of a record type the layout reads ({', '.join(layout.types)}); "
                         "is this the app's log?")
    return sources, skipped


def _file(path: Path, what: str) -> Path:
    if not path.is_file():
        raise ValueError(f"{path}: {'is a folder, not' if path.is_dir() else 'no such'} file; pass {what}")
    return path


def _folder_files(folder: Path, stems: set[str]) -> list[Path]:
    """The files of ``folder`` the mapping names by stem; every ``.csv`` file when it names none."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(_FILE_SUFFIXES))
    if stems:
        files = [p for p in files if _stem(p) in stems]
        clashes = sorted({_stem(p) for p in files if [_stem(q) for q in files].count(_stem(p)) > 1})
        if clashes:
            raise ValueError(f"{folder}: several files are named {clashes[0]} "
                             f"({', '.join(p.name for p in files if _stem(p) == clashes[0])}); keep one")
    else:
        files = [p for p in files if p.name.endswith((".csv", ".csv.gz"))]
    if not files:
        wanted = ", ".join(f"{s}.csv" for s in sorted(stems)) or "a .csv file"
        raise ValueError(f"{folder}: no {wanted} in this folder; pass the folder the app exported (unzipped)")
    return files


def _text(path: Path) -> str:
    try:
        with pa.input_stream(str(path), compression="detect") as stream:
            return stream.read().decode("utf-8").removeprefix("\ufeff")
    except (OSError, pa.ArrowInvalid, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot be read as text ({exc}); a .gz name needs gzip content") from exc


def _convert_options(names, value_columns: set[str]) -> pacsv.ConvertOptions:
    return pacsv.ConvertOptions(column_types={n: pa.float64() for n in names if n in value_columns})


def _read_csv(path: Path, value_columns: set[str], from_folder: bool = False) -> Source:
    try:
        with pa.input_stream(str(path), compression="detect") as stream:
            head = stream.read(1 << 16).decode("utf-8", errors="replace")
    except (OSError, pa.ArrowInvalid) as exc:
        raise ValueError(f"{path}: cannot be read ({exc}); a .gz name needs gzip content") from exc
    head = head.removeprefix("\ufeff")
    lines = head.splitlines()
    # A canonical log (an empty p cell sends it here to be merged) may open with its meta line.
    meta = parse_meta(path, 1, lines[0][len(_META_PREFIX):], "the '# meta:' line") if (
        lines and lines[0].startswith(_META_PREFIX)) else None
    header = 1 if meta is not None else 0
    first = lines[header] if len(lines) > header and head.strip() else ""
    if not first:
        raise ValueError(f"{path}: the file is empty; expected a header line naming the columns")
    delimiter = max(_DELIMITERS, key=first.count)
    names = [c.strip().strip('"') for c in first.split(delimiter)]
    try:
        table = pacsv.read_csv(
            pa.input_stream(str(path), compression="detect"),
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=header + 1),
            parse_options=pacsv.ParseOptions(delimiter=delimiter),
            convert_options=_convert_options(names, value_columns),
        )
    except pa.ArrowInvalid as exc:
        raise ValueError(f"{path}: not a CSV table of numbers under the header's {len(names)} columns ({exc}); "
                         "check the file is the app's CSV export") from exc
    if table.num_rows == 0:
        raise ValueError(f"{path}: a header but no rows; check the recording was not truncated")
    return Source(path, table, _stem(path), from_folder=from_folder, first_line=header + 2, meta=meta)


def _read_records(path: Path, layout: RecordLayout, value_columns: set[str]) -> tuple[list[Source], dict[str, int]]:
    """One source per record type of ``layout`` that has lines in ``path`` (none for a type it lacks), and
    the count of every other type's lines (comments and blank lines aside)."""
    lines = _text(path).splitlines()
    rows: dict[str, list[int]] = {kind: [] for kind in layout.types}
    others: dict[str, int] = {}
    for number, line in enumerate(lines):
        kind = line.split(layout.delimiter, 1)[0]
        if kind in rows:
            rows[kind].append(number)
        elif line.strip() and not (layout.comment and line.startswith(layout.comment)):
            others[kind] = others.get(kind, 0) + 1
    sources = []
    for kind, numbers in rows.items():
        if not numbers:
            continue
        names = layout.types[kind]
        text = "\n".join(lines[i] for i in numbers).encode()
        try:
            table = pacsv.read_csv(pa.BufferReader(text), read_options=pacsv.ReadOptions(column_names=list(names)),
                                   parse_options=pacsv.ParseOptions(delimiter=layout.delimiter, quote_char=False),
                                   convert_options=_convert_options(names, value_columns))
        except pa.ArrowInvalid as exc:
            raise _record_error(path, lines, numbers, kind, names, layout.delimiter, exc) from exc
        sources.append(Source(path, table, kind, np.asarray(numbers, dtype=np.int64) + 1))
    return sources, others


def _record_error(path, lines, numbers, kind, names, delimiter, exc) -> ValueError:
    """The first line of ``kind`` whose field count differs from the layout's, else Arrow's reason."""
    for i in numbers:
        fields = lines[i].split(delimiter)
        if len(fields) != len(names):
            return ValueError(f"{path}:{i + 1}: a {kind} line has {len(fields)} fields, the layout names {len(names)} "
                              f"({delimiter.join(names)}): {lines[i][:80]!r}; fix the line or the layout's columns")
    return ValueError(f"{path}: the {kind} lines do not parse as numbers ({exc}); check the layout's columns")
