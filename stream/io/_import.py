"""Bring your own log: other apps' files to a canonical :class:`SensorLog`.

A *column mapping* says where each canonical column comes from and in what unit::

    t=timestamp:ms, ax=accX:g, ay=accY:g, az=accZ:g, gx=gyroX:deg/s, gy=gyroY:deg/s, gz=gyroZ:deg/s

* the left side is a canonical column (``t``, ``ax ay az``, ``gx gy gz``, ``qx qy qz qw``,
  ``lx ly lz``, ``p``, ``label``; see ``_csv_format``); every group is all-or-nothing;
* the right side names a source column, or several joined by ``+`` (summed: iOS CoreMotion's
  ``gravityX+userAccelerationX``), optionally qualified by its source's name (``gyro.x`` is column
  ``x`` of ``gyro.csv``; ``PRES.pressure`` the ``pressure`` field of a record file's ``PRES`` lines)
  when several sources share a column name. Summed columns of different sources are each put on
  the accelerometer's times first (Sensor Logger's ``Accelerometer.x+Gravity.x``);
* the unit after ``:`` converts to the canonical one; a leading ``-`` flips the sign. Time:
  ``ns us ms s`` (default ns). Acceleration: ``m/s2`` (default) or ``g`` (× 9.80665 m/s²). Angular
  rate: ``rad/s`` (default) or ``deg/s``. Air pressure: ``hPa`` (default) = ``mbar``, ``Pa``,
  ``kPa``, ``bar``. Quaternion and label: no unit;
* an unqualified time column found in several sources is each one's own clock (``t=time:ns`` for a
  folder of files that all have ``time``).

Sign conventions: Android reports the accelerometer as the force that holds the phone up (+9.81
m/s² on z lying face up), which is the canonical convention. iOS CoreMotion reports acceleration
in g with the opposite sign (−1 g on z face up), so an iOS raw accelerometer column maps as
``ax=x:-g``, and CoreMotion's device motion as ``ax=gravityX+userAccelerationX:-g`` (its linear
acceleration as ``lx=userAccelerationX:-g``).

Streams recorded with their own clock and rate — separate files, the record types of one file, or
a column filled only on some rows (a barometer's readings among the accelerometer's rows: a row
whose cells of a stream are all empty is not a sample of that stream) — are merged onto the
accelerometer's timestamps: the canonical log has one sample per accelerometer sample, other
streams are linearly interpolated to those times, quaternions normalised after linear
interpolation (after aligning their signs), labels held from the latest sample. Accelerometer
samples outside another stream's time span (before a barometer's first reading, say) are dropped
(never extrapolated) and counted. Groups a mapping marks *optional* are left out, and reported,
when no source has their columns (a phone without a barometer). All of it is listed in the
:class:`ImportReport`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from .._log import PHYSICAL_LIMITS
from ._csv_format import _GROUPS, pressure_out_of_range
from ._csv_parse import _UNITS_SPLIT
from ._import_sources import Source, parse_records, read_sources
from .._log import STANDARD_GRAVITY, Activity, SensorLog
from .._resample import values_at

__all__ = ["ImportReport", "parse_mapping", "parse_records", "import_log"]

_TIME_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_UNITS = {  # group -> unit -> factor to the canonical unit
    "acc": {"m/s2": 1.0, "g": STANDARD_GRAVITY},
    "linacc": {"m/s2": 1.0, "g": STANDARD_GRAVITY},
    "gyro": {"rad/s": 1.0, "deg/s": np.pi / 180},
    "rotvec": {"": 1.0},
    "pressure": {"hPa": 1.0, "mbar": 1.0, "Pa": 0.01, "kPa": 10.0, "bar": 1000.0},
    "label": {"": 1.0},
}
_GROUP_OF = {c: g for g, cols in _GROUPS.items() for c in cols if g != "t_ns"}
_IMPORT_REPAIRS = ("dedupe", "sort")
# How a stream is put on the accelerometer's times (values_at's kind), and how the report says it.
_MERGE_KIND = {"label": "hold", "rotvec": "quaternion"}
_MERGE_HOW = {"hold": "held from the latest row", "quaternion": "normalised linear interpolation",
              "linear": "linear interpolation"}


@dataclass(frozen=True)
class _Entry:
    """One mapping entry: canonical column <- sum of source columns × factor."""

    target: str
    columns: tuple[str, ...]
    unit: str
    factor: float

    def describe(self) -> str:
        source = "+".join(self.columns)
        if self.target == "t":
            return f"t_ns <- {source} ({self.unit or 'ns'} -> ns)"
        if self.factor == 1.0:
            return f"{self.target} <- {source}"
        return f"{self.target} <- {source} × {self.factor:.6g} ({self.unit})"


def _parse_entry(text: str) -> _Entry:
    target, sep, rhs = text.partition("=")
    target, rhs = target.strip(), rhs.strip()
    if target == "t_ns":
        target = "t"
    if not sep or not rhs:
        raise ValueError(f"mapping entry {text.strip()!r} must look like NAME=COLUMN[:UNIT], e.g. ax=accX:g")
    source, _, unit = rhs.rpartition(":") if ":" in rhs else (rhs, "", "")
    columns = tuple(c.strip() for c in source.split("+"))
    if not all(columns):
        raise ValueError(f"mapping entry {text.strip()!r} names an empty column")
    unit = unit.strip()
    if target == "t":
        if unit.lstrip("-") != unit or (unit or "ns") not in _TIME_UNITS:
            raise ValueError(f"mapping entry {text.strip()!r}: time unit must be one of {list(_TIME_UNITS)}")
        return _Entry("t", columns, unit or "ns", float(_TIME_UNITS[unit or "ns"]))
    group = _GROUP_OF.get(target)
    if group is None:
        known = ["t", *(c for g, cols in _GROUPS.items() if g != "t_ns" for c in cols)]
        raise ValueError(f"mapping entry {text.strip()!r}: {target!r} is not a canonical column; choose from {known}")
    sign, name = (-1.0, unit[1:]) if unit.startswith("-") else (1.0, unit)
    units = _UNITS[group]
    if name == "" and "" not in units:
        name = next(iter(units))  # the canonical unit is the default
    if name not in units:
        allowed = [u for u in units if u] or ["none"]
        raise ValueError(f"mapping entry {text.strip()!r}: unit {unit!r} for {target} must be one of {allowed} "
                         "(a leading '-' flips the sign)")
    return _Entry(target, columns, unit, sign * units[name])


def parse_mapping(spec) -> list:
    """Parse a column mapping: ``"t=timestamp:ms,ax=accX:g,..."`` or a dict ``{"ax": "accX:g", ...}``.

    Returns the entries in order; raises ``ValueError`` naming the bad entry and the fix.

    Examples
    --------
    >>> [e.describe() for e in parse_mapping("t=time:s, ax=x:-g, ay=y:-g, az=z:-g")][:2]
    ['t_ns <- time (s -> ns)', 'ax <- x × -9.80665 (-g)']
    """
    if isinstance(spec, dict):
        items = [f"{k}={v}" for k, v in spec.items()]
    else:
        items = [s for s in str(spec).split(",") if s.strip()]
    entries = [_parse_entry(s) for s in items]
    targets = [e.target for e in entries if e.target != "t"]
    dup = sorted({t for t in targets if targets.count(t) > 1})
    if dup:
        raise ValueError(f"the mapping sets {dup} more than once; map each canonical column once")
    for group, cols in _GROUPS.items():
        if group == "t_ns":
            continue
        present = [c for c in cols if c in targets]
        if (group == "acc" or present) and len(present) != len(cols):
            missing = [c for c in cols if c not in targets]
            why = "is required" if group == "acc" else "is all-or-nothing"
            raise ValueError(f"the mapping lacks {missing}: the {group} group {list(cols)} {why}")
    if not any(e.target == "t" for e in entries):
        raise ValueError("the mapping has no time column; add t=COLUMN:UNIT (UNIT one of ns, us, ms, s)")
    return entries


@dataclass
class ImportReport:
    """What :func:`import_log` read, converted, merged, left out and dropped (``--json`` of ``stairsense import``)."""

    sources: list = field(default_factory=list)  # per source: path, rows, rate_hz, streams
    conversions: list = field(default_factory=list)
    merge: list = field(default_factory=list)
    repairs: list = field(default_factory=list)
    left_out: list = field(default_factory=list)  # optional groups no source has, files and lines not used
    samples: int = 0
    dropped_outside_overlap: int = 0

    def to_dict(self) -> dict:
        return {"sources": self.sources, "conversions": self.conversions, "merge": self.merge,
                "repairs": self.repairs, "left_out": self.left_out, "samples": self.samples,
                "dropped_outside_overlap": self.dropped_outside_overlap}

    def lines(self) -> list[str]:
        out = [f"{s['path']}: {s['rows']} rows at {s['rate_hz']:.1f} Hz -> {', '.join(s['streams'])}"
               for s in self.sources]
        out += [f"converted {c}" for c in self.conversions]
        out += [f"merged {m}" for m in self.merge]
        out += [f"repaired {r}" for r in self.repairs]
        out += [f"left out {x}" for x in self.left_out]
        if self.dropped_outside_overlap:
            out.append(f"dropped {self.dropped_outside_overlap} accelerometer samples outside the other streams' "
                       "time span (never extrapolated)")
        return out


def _locate(name: str, sources: list[Source]) -> tuple[int, str]:
    """The source index and column a (possibly ``NAME.``-qualified) column name refers to."""
    holders = _holders(name, sources)
    if not holders:
        have = {s.label: s.columns[:12] for s in sources}
        raise ValueError(f"no source has a column {name!r}; the sources have {have}")
    if len(holders) > 1:
        names = [sources[i].name for i, _ in holders]
        raise ValueError(f"column {name!r} is in several sources; qualify it with the source's name, e.g. "
                         f"{names[0]}.{holders[0][1]}")
    return holders[0]


def _holders(name: str, sources: list[Source]) -> list[tuple[int, str]]:
    """Every (source index, column) ``name`` may mean: the column itself, else ``NAME.COLUMN``."""
    holders = [(i, name) for i, s in enumerate(sources) if name in s.columns]
    if not holders and "." in name:
        qualifier, _, column = name.partition(".")
        holders = [(i, column) for i, s in enumerate(sources) if s.name == qualifier and column in s.columns]
    return holders


def _numbers(source: Source, column: str, integer_ok: bool) -> tuple[np.ndarray, np.ndarray]:
    """A column's values (int64 when ``integer_ok`` and the column is integral, else float64, 0 where
    missing) and which rows have one."""
    col = source.table.column(column)
    if pa.types.is_integer(col.type) and integer_ok:
        kind = np.int64
    elif pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_null(col.type):
        kind = np.float64
    else:
        sample = next((v for v in col.to_pylist() if v not in (None, "")), None)
        raise ValueError(f"{source.label}: column {column!r} is not numeric (e.g. {sample!r}); map a column of numbers")
    present = ~np.asarray(col.is_null(), dtype=bool)
    return col.fill_null(0).to_numpy().astype(kind), present


def _time_ns(raw: np.ndarray, entry: _Entry) -> np.ndarray:
    scale = int(entry.factor)
    if raw.dtype == np.int64:
        return raw * scale
    return np.rint(raw * scale).astype(np.int64)


def _ordered_rows(source: Source, t: np.ndarray, values: np.ndarray, rows: np.ndarray, repairs, report: ImportReport):
    """Rows in strictly increasing time, by the ``sort`` and ``dedupe`` repairs or an error naming the line."""
    if "sort" in repairs:
        late = int(np.count_nonzero(t < np.maximum.accumulate(t)))
        order = np.argsort(t, kind="stable")
        t, values, rows = t[order], values[order], rows[order]
        if late:
            report.repairs.append(f"{source.label}: sort: moved {late} rows that were out of time order")
    if "dedupe" in repairs or "sort" in repairs:
        repeat = np.zeros(t.size, dtype=bool)
        repeat[1:] = t[1:] == t[:-1]
        if repeat.any():
            # As the reader's dedupe: an exact duplicate repeats the values of the row kept for its time.
            run_start = np.maximum.accumulate(np.where(~repeat, np.arange(t.size), 0))
            same = repeat & (values == values[run_start]).all(axis=1)
            report.repairs.append(f"{source.label}: dedupe: dropped {int(same.sum())} exact duplicates and "
                                  f"{int((repeat & ~same).sum())} rows repeating a timestamp with other values "
                                  "(kept the first)")
            t, values, rows = t[~repeat], values[~repeat], rows[~repeat]
    bad = np.flatnonzero(np.diff(t) <= 0)
    if bad.size:
        i = int(bad[0]) + 1
        fix = "use --repair dedupe to drop repeats" if t[i] == t[i - 1] else "use --repair sort to reorder"
        raise ValueError(f"{source.path}:{source.line(rows[i])}: time {t[i]} ns does not increase after "
                         f"{t[i - 1]} ns; {fix} (each is reported)")
    if not np.isfinite(values).all():
        i = int(np.flatnonzero(~np.isfinite(values).all(axis=1))[0])
        raise ValueError(f"{source.path}:{source.line(rows[i])}: nan or inf in a mapped column (or a value too large "
                         "for a number once converted); fix or delete the line")
    return t, values, rows


@dataclass
class _Stream:
    """One group's samples from one source, before the merge: ``entries[j].target`` receives
    ``values[:, j]`` (added to what other sources give it, for a sum across sources)."""

    source: int
    group: str
    entries: list[_Entry]  # as resolved to this source's columns
    t: np.ndarray
    values: np.ndarray
    rows: np.ndarray  # the source rows the samples came from
    all_rows: bool  # every row of the source is a sample (no empty cells)


def _check_optional(optional) -> tuple[str, ...]:
    optional = tuple(optional)
    allowed = [g for g in _GROUPS if g not in ("t_ns", "acc")]
    bad = [g for g in optional if g not in allowed]
    if bad:
        raise ValueError(f"optional groups are among {allowed}; got {bad}")
    return optional


def _value_columns(entries) -> tuple[set[str], set[str]]:
    """The column names the mapping reads values from (bare and ``NAME.``-stripped), and the qualifiers."""
    names, qualifiers = set(), set()
    for e in entries:
        for c in e.columns:
            qualifier, dot, bare = c.partition(".")
            if dot:
                qualifiers.add(qualifier)
            if e.target != "t":
                names.update({c, bare} if dot else {c})
    return names, qualifiers


def import_log(paths, mapping, *, repair=(), meta: dict | None = None, records=None,
               optional=()) -> tuple[SensorLog, ImportReport]:
    """Read other apps' files into one canonical :class:`SensorLog` (see the module docstring).

    Parameters
    ----------
    paths : sequence of str or Path
        CSV files (comma, semicolon or tab separated, optional UTF-8 BOM, ``.gz`` allowed) with a
        header line, or folders of them (the files the mapping names by stem, every ``.csv`` file
        if it names none); with ``records``, header-less record files. One file may hold every
        stream, or one file per sensor.
    mapping : str or dict
        The column mapping (:func:`parse_mapping`).
    repair : iterable of {"dedupe", "sort"}
        Fix repeated or out-of-order timestamps in the sources instead of failing (reported).
    meta : dict, optional
        Extra provenance for the log's meta (device, subject, ...).
    records : dict, optional
        The files are typed lines, one record type per sensor (:func:`parse_records`); each type is
        a source named by the type (``ACCE.x``).
    optional : iterable of str
        Groups (``"gyro"``, ``"pressure"``, ...) to leave out, reported, when no source has their
        columns; any other missing column is an error.

    Returns
    -------
    (SensorLog, ImportReport)

    Raises
    ------
    ValueError
        Naming the file (and line where there is one), the mapping entry and the fix.

    Examples
    --------
    A barometer read once a second among 50 Hz accelerometer rows (its cells empty in between):

    >>> import tempfile
    >>> from pathlib import Path
    >>> rows = [f"{i * 20},0,0,9.8," + (f"{1000 - i / 500:.3f}" if i % 50 == 0 else "") for i in range(151)]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = Path(d, "phone.csv").write_text("\\n".join(["ms,x,y,z,hpa", *rows]) + "\\n")
    ...     log, report = import_log([Path(d, "phone.csv")], "t=ms:ms,ax=x,ay=y,az=z,p=hpa")
    >>> len(log), log.pressure[[0, 25, 50, 150]].tolist()
    (151, [1000.0, 999.95, 999.9, 999.7])
    >>> report.merge[0].split(" (")[0]
    'pressure from phone.csv'
    """
    entries = parse_mapping(mapping)
    layout = parse_records(records)
    optional = _check_optional(optional)
    repair = tuple(repair)
    unknown = [r for r in repair if r not in _IMPORT_REPAIRS]
    if unknown:
        raise ValueError(f"import repairs are {list(_IMPORT_REPAIRS)}; got {unknown} (other repairs apply when "
                         "the imported log is replayed)")
    value_columns, qualifiers = _value_columns(entries)
    sources, skipped = read_sources(list(paths), layout, value_columns, qualifiers)
    report = ImportReport(left_out=skipped)
    entries = _without_missing_optional(entries, sources, optional, report)
    times = _time_columns(entries, sources)
    parts = _parts(entries, sources)  # source -> group -> [(entry, the source's columns)]
    for i, s in enumerate(sources):
        if i in parts and i not in times:
            raise ValueError(f"{s.label}: streams are mapped from this source but not its time column; "
                             "add t=COLUMN:UNIT for it (qualify the column as NAME.COLUMN)")
        if i not in parts:
            if not (s.from_folder or layout is not None):
                raise ValueError(f"{s.path}: no column of this file is mapped; drop the file or map its columns")
            report.left_out.append(f"{s.label}: no column of it is mapped")
    streams = [stream for i, groups in parts.items()
               for stream in _source_streams(i, sources[i], groups, times[i], repair, report)]
    _describe_sources(sources, streams, times, report)
    columns, base = _merge(entries, sources, streams, report)
    return _log(columns, sources[base.source], entries, sources, meta, report), report


def _without_missing_optional(entries, sources, optional, report) -> list:
    """``entries`` less the optional groups some of whose columns no source has (each reported)."""
    missing = {}
    for e in entries:
        group = _GROUP_OF.get(e.target)
        if group in optional and group not in missing:
            absent = [c for c in e.columns if not _holders(c, sources)]
            if absent:
                missing[group] = absent[0]
    for group, column in missing.items():
        report.left_out.append(f"{group}: no source has {column!r} (optional in this mapping)")
    return [e for e in entries if _GROUP_OF.get(e.target) not in missing]


def _time_columns(entries, sources) -> dict[int, _Entry]:
    """Each source's time entry, resolved to its own column; an unqualified name serves every holder."""
    times: dict[int, _Entry] = {}
    for e in entries:
        if e.target != "t":
            continue
        if len(e.columns) > 1:
            raise ValueError(f"t={'+'.join(e.columns)}: a time column cannot be a sum; map one column")
        holders = _holders(e.columns[0], sources)
        if not holders:
            _locate(e.columns[0], sources)  # raises, listing the sources' columns
        for i, column in holders:
            if i in times:
                raise ValueError(f"{sources[i].label}: two time columns are mapped ({times[i].columns[0]} and "
                                 f"{column}); map one t per source")
            times[i] = _Entry("t", (column,), e.unit, e.factor)
    return times


def _parts(entries, sources) -> dict[int, dict[str, list[tuple[_Entry, list[str]]]]]:
    """Per source and group, the entries fed from it with the source's columns (a sum across sources
    gives each its share)."""
    parts: dict[int, dict[str, list]] = {}
    for e in entries:
        if e.target == "t":
            continue
        located = [_locate(c, sources) for c in e.columns]
        group = _GROUP_OF[e.target]
        by_source: dict[int, list[str]] = {}
        for i, column in located:
            by_source.setdefault(i, []).append(column)
        if len(by_source) > 1 and group in _MERGE_KIND:
            raise ValueError(f"{e.target}={'+'.join(e.columns)} sums columns of different sources; a {group} "
                             "column cannot be interpolated and summed, so map columns of one source")
        for i, columns in by_source.items():
            parts.setdefault(i, {}).setdefault(group, []).append((_Entry(e.target, tuple(columns), e.unit, e.factor),
                                                                  columns))
    for group in _MERGE_KIND:
        feeding = [sources[i].label for i, groups in parts.items() if group in groups]
        if len(feeding) > 1:
            raise ValueError(f"the {group} columns come from {feeding}; map the whole group from one source")
    return parts


def _group_values(src: Source, group: str, items) -> tuple[np.ndarray, np.ndarray]:
    """A group's converted columns from ``src`` and which rows hold a sample of it (every cell filled)."""
    values, present = [], []
    for e, columns in items:
        numbers = [_numbers(src, c, integer_ok=False) for c in columns]
        with np.errstate(over="ignore"):  # a sum or unit beyond float range is inf, refused with its line later
            values.append(np.sum([v for v, _ in numbers], axis=0) * e.factor)
        present += [p for _, p in numbers]
    values, present = np.column_stack(values), np.column_stack(present)
    has = present.all(axis=1)
    partial = present.any(axis=1) & ~has
    if partial.any():
        row = int(np.flatnonzero(partial)[0])
        names = [c for _, cols in items for c in cols]
        empty = [n for n, ok in zip(names, present[row]) if not ok]
        raise ValueError(f"{src.path}:{src.line(row)}: the {group} columns {names} are filled except {empty}; "
                         "fill them or empty them all (a row without a sample of this stream)")
    if not has.any():
        raise ValueError(f"{src.label}: every {group} cell is empty; map columns that hold the recording")
    return values, has


def _source_streams(index: int, src: Source, groups: dict, time: _Entry, repair, report) -> list[_Stream]:
    """The streams of one source, each in time order: groups sampled on the same rows are ordered (and
    repaired, and reported) together, as one table; a group filled on other rows is a stream of its own."""
    raw, t_present = _numbers(src, time.columns[0], integer_ok=True)
    by_rows: dict[bytes, list[tuple[str, list, np.ndarray, np.ndarray]]] = {}
    for group, items in groups.items():
        values, has = _group_values(src, group, items)
        by_rows.setdefault(np.packbits(has).tobytes(), []).append((group, items, values, has))
    streams = []
    for members in by_rows.values():
        has = members[0][3]
        missing_time = has & ~t_present
        if missing_time.any():
            row = int(np.flatnonzero(missing_time)[0])
            raise ValueError(f"{src.path}:{src.line(row)}: time column {time.columns[0]!r} is empty; fix or delete "
                             "the line")
        rows = np.flatnonzero(has)
        widths = np.cumsum([0, *(m[2].shape[1] for m in members)])
        t, values, rows = _ordered_rows(src, _time_ns(raw[rows], time),
                                        np.column_stack([m[2][rows] for m in members]), rows, repair, report)
        for (group, items, _, _), lo, hi in zip(members, widths[:-1], widths[1:]):
            streams.append(_Stream(index, group, [e for e, _ in items], t, values[:, lo:hi], rows,
                                   all_rows=bool(has.all())))
            if group == "pressure":
                _check_pressure(src, items, values[:, lo], rows)
            elif group in PHYSICAL_LIMITS:
                _check_range(src, group, items, values[:, lo:hi], rows)
    return streams


def _check_range(src: Source, group: str, items, values: np.ndarray, rows: np.ndarray) -> None:
    """Refuse a converted value beyond any phone sensor (the readers' limit), naming its line and column."""
    limit, unit = PHYSICAL_LIMITS[group]
    beyond = np.abs(values) > limit
    if beyond.any():
        i, j = (int(k[0]) for k in np.nonzero(beyond))
        target = items[j][0].target
        unit = f" {unit}" if unit else ""
        raise ValueError(f"{src.path}:{src.line(rows[i])}: {target} = {values[i, j]:g}{unit} once converted, beyond "
                         f"any phone sensor (accepted: |{target}| <= {limit:g}{unit}); check the column's unit, or fix "
                         "or delete the line")


def _check_pressure(src: Source, items, p: np.ndarray, rows: np.ndarray) -> None:
    if (bad := pressure_out_of_range(p)) is not None:
        i, reason, unit = bad
        fix = (f"map the column with its unit: p={items[0][0].columns[0]}:{unit}" if unit in _UNITS["pressure"]
               else f"map the column with its unit (p=COLUMN:UNIT, UNIT one of {', '.join(_UNITS['pressure'])})")
        raise ValueError(f"{src.path}:{src.line(rows[i])}: air pressure after conversion: {reason}; {fix}")


def _short(src: Source) -> str:
    """The source in the report's lines: the file name, and the record type for a record file."""
    return src.path.name if src.name == src.path.name.split(".")[0] else f"{src.path.name} ({src.name} lines)"


def _describe_sources(sources, streams, times, report) -> None:
    """Per source that feeds the log: its rows, rate and streams, and each conversion applied."""
    for i, src in enumerate(sources):
        mine = [s for s in streams if s.source == i]
        if not mine:
            continue
        t = max(mine, key=lambda s: s.t.size).t
        rate = 1e9 / float(np.median(np.diff(t))) if t.size > 1 else float("nan")
        report.sources.append({"path": src.label, "rows": src.table.num_rows, "rate_hz": rate,
                               "streams": sorted({s.group for s in mine})})
        entries = [e for s in mine for e in s.entries]
        report.conversions += [f"{_short(src)}: {e.describe()}" for e in [times[i], *entries]]


def _merge(entries, sources, streams: list[_Stream], report: ImportReport) -> tuple[dict, _Stream]:
    """Every stream on the base accelerometer's times (the source of ``ax``'s first column): its own
    samples where it shares the base's rows, else interpolated inside its span; shares of a sum added."""
    ax = next(e for e in entries if e.target == "ax")
    base_source = _locate(ax.columns[0], sources)[0]
    base = next(s for s in streams if s.source == base_source and s.group == "acc")
    direct = [s.source == base.source and np.array_equal(s.rows, base.rows) for s in streams]
    inside = np.ones(base.t.size, dtype=bool)
    for s, same in zip(streams, direct):
        if same:
            continue
        if s.t.size < 2:
            raise ValueError(f"{sources[s.source].label}: one {s.group} sample; a stream needs two or more to be put "
                             "on the accelerometer's times")
        inside &= (base.t >= s.t[0]) & (base.t <= s.t[-1])
    report.dropped_outside_overlap = int((~inside).sum())
    t_out = base.t[inside]
    if t_out.size < 2:
        raise ValueError(f"the streams overlap in {t_out.size} accelerometer sample(s); the files must cover the "
                         "same time span on one clock (check the time units)")
    summed = {e.target for e in entries if e.target != "t" and len({_locate(c, sources)[0] for c in e.columns}) > 1}
    columns: dict[str, np.ndarray] = {"t": t_out}
    for s, same in zip(streams, direct):
        if same:
            picked = s.values[inside]
        else:
            kind = _MERGE_KIND.get(s.group, "linear")
            # Relative to the first sample: np.interp works in float64, whose step at epoch nanoseconds
            # (~1.7e18) is 256 ns, enough to move an interpolated value by slope × 128 ns.
            picked = values_at(t_out - t_out[0], s.t - t_out[0], s.values, kind)
            src = sources[s.source]
            share = [e.target for e in s.entries if e.target in summed]
            rows = "" if s.all_rows else f"the {s.t.size} of {src.table.num_rows} rows with values, "
            report.merge.append(f"{s.group} from {_short(src)} ({rows}{1e9 / np.median(np.diff(s.t)):.1f} Hz, "
                                f"largest step {np.diff(s.t).max() / 1e9:.3f} s) onto the accelerometer's times by "
                                f"{_MERGE_HOW[kind]}" + (f", added to the other sources' {', '.join(share)}"
                                                         if share else ""))
        for j, target in enumerate(e.target for e in s.entries):
            columns[target] = columns[target] + picked[:, j] if target in columns else picked[:, j]
    return columns, base


def _log(columns, base_src: Source, entries, sources, meta, report) -> SensorLog:
    """The merged columns as a :class:`SensorLog`, after the checks that need them all (units, labels, p)."""
    acc = np.column_stack([columns[c] for c in _GROUPS["acc"]])
    median = float(np.median(np.linalg.norm(acc, axis=1)))
    if median < _UNITS_SPLIT:
        raise ValueError(f"{base_src.label}: after conversion the median |acc| is {median:.3g} m/s², which looks "
                         "like g; map the accelerometer with :g (or :-g for iOS CoreMotion)")

    def group(name):
        cols = _GROUPS[name]
        return np.column_stack([columns[c] for c in cols]) if cols[0] in columns else None

    label = columns.get("label")
    if label is not None:
        label = np.rint(label).astype(np.int64)
        codes = sorted(int(a) for a in Activity)
        bad = ~np.isin(label, codes)
        if bad.any():
            raise ValueError(f"label {int(label[bad][0])} is not an Activity code {codes}; map a column of codes "
                             "(0 unlabelled, 1 walking, 2 upstairs, 3 downstairs, ...)")
    pressure = columns.get("p")
    if pressure is not None and (bad := pressure_out_of_range(pressure)) is not None:
        raise ValueError(f"air pressure p after summing its columns: {bad[1]}; map p in hPa")
    log = SensorLog(
        columns["t"], acc, gyro=group("gyro"), rotvec=group("rotvec"), linacc=group("linacc"), label=label,
        pressure=pressure,
        meta={**{k: v for src in sources if src.meta for k, v in src.meta.items()}, **(meta or {}),
              "source": "stairsense import",
              "imported_from": list(dict.fromkeys(str(s.path) for s in sources)),  # a record file once
              "mapping": [e.describe() for e in entries], "units": "m/s2"},
    )
    report.samples = len(log)
    return log
