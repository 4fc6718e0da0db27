"""Bring your own log: other apps' CSV files to a canonical :class:`SensorLog` (issue 10, item 8).

A *column mapping* says where each canonical column comes from and in what unit::

    t=timestamp:ms, ax=accX:g, ay=accY:g, az=accZ:g, gx=gyroX:deg/s, gy=gyroY:deg/s, gz=gyroZ:deg/s

* the left side is a canonical column (``t``, ``ax ay az``, ``gx gy gz``, ``qx qy qz qw``,
  ``lx ly lz``, ``label``; see ``_csv_format``); every group is all-or-nothing;
* the right side names a source column, or several joined by ``+`` (summed: iOS CoreMotion's
  ``gravityX+userAccelerationX``), optionally qualified by the source file's stem (``gyro.x`` is
  column ``x`` of ``gyro.csv``) when several files share a column name;
* the unit after ``:`` converts to the canonical one; a leading ``-`` flips the sign. Time:
  ``ns us ms s`` (default ns). Acceleration: ``m/s2`` (default) or ``g`` (× 9.80665 m/s²). Angular
  rate: ``rad/s`` (default) or ``deg/s``. Quaternion and label: no unit.

Sign conventions: Android reports the accelerometer as the force that holds the phone up (+9.81
m/s² on z lying face up), which is the canonical convention. iOS CoreMotion reports acceleration
in g with the opposite sign (−1 g on z face up), so an iOS raw accelerometer column maps as
``ax=x:-g``, and CoreMotion's device motion as ``ax=gravityX+userAccelerationX:-g`` (its linear
acceleration as ``lx=userAccelerationX:-g``).

Separate sensor files (one per sensor, each with its own clock and rate) are merged onto the
accelerometer's timestamps: the canonical log has one sample per accelerometer sample, other
vector streams are linearly interpolated to those times, quaternions normalised after linear
interpolation (after aligning their signs), labels held from the latest sample. Accelerometer
samples outside another stream's time span are dropped (never extrapolated) and counted. All of
it is listed in the :class:`ImportReport`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ._csv_format import _GROUPS, _PHYSICAL_LIMITS
from ._csv_parse import _UNITS_SPLIT
from .._log import STANDARD_GRAVITY, Activity, SensorLog
from .._resample import values_at

__all__ = ["ImportReport", "parse_mapping", "import_log"]

_TIME_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_UNITS = {  # group -> unit -> factor to the canonical unit
    "acc": {"m/s2": 1.0, "g": STANDARD_GRAVITY},
    "linacc": {"m/s2": 1.0, "g": STANDARD_GRAVITY},
    "gyro": {"rad/s": 1.0, "deg/s": np.pi / 180},
    "rotvec": {"": 1.0},
    "label": {"": 1.0},
}
_GROUP_OF = {c: g for g, cols in _GROUPS.items() for c in cols if g != "t_ns"}
_IMPORT_REPAIRS = ("dedupe", "sort")
_DELIMITERS = (",", ";", "\t")


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
    """What :func:`import_log` read, converted, merged and dropped (``--json`` of ``stairsense import``)."""

    sources: list = field(default_factory=list)  # per file: path, rows, rate_hz, streams
    conversions: list = field(default_factory=list)
    merge: list = field(default_factory=list)
    repairs: list = field(default_factory=list)
    samples: int = 0
    dropped_outside_overlap: int = 0

    def to_dict(self) -> dict:
        return {"sources": self.sources, "conversions": self.conversions, "merge": self.merge,
                "repairs": self.repairs, "samples": self.samples,
                "dropped_outside_overlap": self.dropped_outside_overlap}

    def lines(self) -> list[str]:
        out = [f"{s['path']}: {s['rows']} rows at {s['rate_hz']:.1f} Hz -> {', '.join(s['streams'])}"
               for s in self.sources]
        out += [f"converted {c}" for c in self.conversions]
        out += [f"merged {m}" for m in self.merge]
        out += [f"repaired {r}" for r in self.repairs]
        if self.dropped_outside_overlap:
            out.append(f"dropped {self.dropped_outside_overlap} accelerometer samples outside the other streams' "
                       "time span (never extrapolated)")
        return out


@dataclass
class _Source:
    path: Path
    table: pa.Table
    line0: int  # file line of the first data row

    @property
    def columns(self) -> list[str]:
        return self.table.column_names


def _read_source(path: Path) -> _Source:
    if not path.is_file():
        raise ValueError(f"{path}: {'is a folder, not' if path.is_dir() else 'no such'} file; pass a CSV file "
                         "exported by the recording app")
    try:
        with pa.input_stream(str(path), compression="detect") as stream:
            head = stream.read(1 << 16).decode("utf-8", errors="replace")
    except (OSError, pa.ArrowInvalid) as exc:
        raise ValueError(f"{path}: cannot be read ({exc}); a .gz name needs gzip content") from exc
    head = head.removeprefix("\ufeff")
    first = head.splitlines()[0] if head.strip() else ""
    if not first:
        raise ValueError(f"{path}: the file is empty; expected a header line naming the columns")
    delimiter = max(_DELIMITERS, key=first.count)
    names = [c.strip().strip('"') for c in first.split(delimiter)]
    try:
        table = pacsv.read_csv(
            pa.input_stream(str(path), compression="detect"),
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1),
            parse_options=pacsv.ParseOptions(delimiter=delimiter),
        )
    except pa.ArrowInvalid as exc:
        raise ValueError(f"{path}: not a CSV table with the header's {len(names)} columns ({exc}); "
                         "check the file is the app's CSV export") from exc
    if table.num_rows == 0:
        raise ValueError(f"{path}: a header but no rows; check the recording was not truncated")
    return _Source(path, table, 2)


def _locate(name: str, sources: list[_Source]) -> tuple[int, str]:
    """The source index and column a (possibly ``stem.``-qualified) column name refers to."""
    holders = [i for i, s in enumerate(sources) if name in s.columns]
    if not holders and "." in name:
        stem, _, column = name.partition(".")
        holders = [i for i, s in enumerate(sources) if s.path.name.split(".")[0] == stem and column in s.columns]
        name = column if holders else name
    if not holders:
        have = {str(s.path): s.columns[:12] for s in sources}
        raise ValueError(f"no source has a column {name!r}; the sources have {have}")
    if len(holders) > 1:
        stems = [sources[i].path.name.split(".")[0] for i in holders]
        raise ValueError(f"column {name!r} is in several sources; qualify it with the file's stem, e.g. "
                         f"{stems[0]}.{name}")
    return holders[0], name


def _numbers(source: _Source, column: str, integer_ok: bool) -> np.ndarray:
    col = source.table.column(column)
    if pa.types.is_integer(col.type) and integer_ok:
        kind = np.int64
    elif pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
        kind = np.float64
    else:
        sample = next((v for v in col.to_pylist() if v not in (None, "")), None)
        raise ValueError(f"{source.path}: column {column!r} is not numeric (e.g. {sample!r}); map a column of numbers")
    if col.null_count:
        row = int(np.flatnonzero(np.asarray(col.is_null()))[0])
        raise ValueError(f"{source.path}:{source.line0 + row}: column {column!r} is empty; fix or delete the line")
    return col.to_numpy().astype(kind)


def _time_ns(source: _Source, entry: _Entry) -> np.ndarray:
    parts = [_numbers(source, c, integer_ok=True) for c in entry.columns]
    raw = parts[0] if len(parts) == 1 else np.sum(parts, axis=0)
    scale = int(entry.factor)
    if raw.dtype == np.int64:
        return raw * scale
    return np.rint(raw * scale).astype(np.int64)


def _ordered_rows(source: _Source, t: np.ndarray, values: np.ndarray, targets: list[str], repairs,
                  report: ImportReport):
    """Rows in strictly increasing time, by the ``sort`` and ``dedupe`` repairs or an error naming the line;
    every value finite and within a phone sensor's range (``targets`` name the columns of ``values``)."""
    rows = np.arange(t.size)  # data row of each sample, for line numbers after repairs
    if "sort" in repairs:
        late = int(np.count_nonzero(t < np.maximum.accumulate(t)))
        order = np.argsort(t, kind="stable")
        t, values, rows = t[order], values[order], rows[order]
        if late:
            report.repairs.append(f"{source.path}: sort: moved {late} rows that were out of time order")
    if "dedupe" in repairs or "sort" in repairs:
        repeat = np.zeros(t.size, dtype=bool)
        repeat[1:] = t[1:] == t[:-1]
        if repeat.any():
            # As the reader's dedupe: an exact duplicate repeats the values of the row kept for its time.
            run_start = np.maximum.accumulate(np.where(~repeat, np.arange(t.size), 0))
            same = repeat & (values == values[run_start]).all(axis=1)
            report.repairs.append(f"{source.path}: dedupe: dropped {int(same.sum())} exact duplicates and "
                                  f"{int((repeat & ~same).sum())} rows repeating a timestamp with other values "
                                  "(kept the first)")
            t, values, rows = t[~repeat], values[~repeat], rows[~repeat]
    bad = np.flatnonzero(np.diff(t) <= 0)
    if bad.size:
        i = int(bad[0]) + 1
        fix = "use --repair dedupe to drop repeats" if t[i] == t[i - 1] else "use --repair sort to reorder"
        raise ValueError(f"{source.path}:{source.line0 + rows[i]}: time {t[i]} ns does not increase after "
                         f"{t[i - 1]} ns; {fix} (each is reported)")
    if not np.isfinite(values).all():
        i = int(np.flatnonzero(~np.isfinite(values).all(axis=1))[0])
        raise ValueError(f"{source.path}:{source.line0 + rows[i]}: nan or inf in a mapped column (or a value "
                         "too large for a number once converted); fix or delete the line")
    limits = np.array([_PHYSICAL_LIMITS.get(_GROUP_OF[name], (np.inf, ""))[0] for name in targets])
    beyond = np.abs(values) > limits
    if beyond.any():
        i, j = (int(k[0]) for k in np.nonzero(beyond))
        limit, unit = _PHYSICAL_LIMITS[_GROUP_OF[targets[j]]]
        unit = f" {unit}" if unit else ""
        raise ValueError(f"{source.path}:{source.line0 + rows[i]}: {targets[j]} = {values[i, j]:g}{unit} once "
                         f"converted, beyond any phone sensor (accepted: |{targets[j]}| <= {limit:g}{unit}); check "
                         "the column's unit, or fix or delete the line")
    return t, values


def import_log(paths, mapping, *, repair=(), meta: dict | None = None) -> tuple[SensorLog, ImportReport]:
    """Read other apps' CSV files into one canonical :class:`SensorLog` (see the module docstring).

    Parameters
    ----------
    paths : sequence of str or Path
        CSV files (comma, semicolon or tab separated, optional UTF-8 BOM, ``.gz`` allowed) with a
        header line. One file may hold every stream, or one file per sensor.
    mapping : str or dict
        The column mapping (:func:`parse_mapping`).
    repair : iterable of {"dedupe", "sort"}
        Fix repeated or out-of-order timestamps in the sources instead of failing (reported).
    meta : dict, optional
        Extra provenance for the log's meta (device, subject, ...).

    Returns
    -------
    (SensorLog, ImportReport)

    Raises
    ------
    ValueError
        Naming the file (and line where there is one), the mapping entry and the fix.
    """
    entries = parse_mapping(mapping)
    repair = tuple(repair)
    unknown = [r for r in repair if r not in _IMPORT_REPAIRS]
    if unknown:
        raise ValueError(f"import repairs are {list(_IMPORT_REPAIRS)}; got {unknown} (other repairs apply when "
                         "the imported log is replayed)")
    sources = [_read_source(Path(p)) for p in paths]
    if not sources:
        raise ValueError("no source files given")
    report = ImportReport()
    # Which source feeds each entry; every source that feeds a stream needs its own time entry.
    fed: dict[int, list[tuple[_Entry, list[str]]]] = {}
    times: dict[int, _Entry] = {}
    for e in entries:
        located = [_locate(c, sources) for c in e.columns]
        if len({i for i, _ in located}) > 1:
            raise ValueError(f"{e.target}={'+'.join(e.columns)} sums columns of different files; sum columns of one file")
        i = located[0][0]
        resolved = _Entry(e.target, tuple(c for _, c in located), e.unit, e.factor)
        if e.target == "t":
            if i in times:
                raise ValueError(f"{sources[i].path}: two time columns are mapped; map one t per file")
            times[i] = resolved
        else:
            fed.setdefault(i, []).append((resolved, [resolved.target]))
    for i in fed:
        if i not in times:
            raise ValueError(f"{sources[i].path}: streams are mapped from this file but not its time column; "
                             "add t=COLUMN:UNIT for it (qualify the column as STEM.COLUMN)")
    unused = [str(sources[i].path) for i in range(len(sources)) if i not in fed]
    if unused:
        raise ValueError(f"{unused[0]}: no column of this file is mapped; drop the file or map its columns")
    streams = {}  # source index -> (t_ns, values (n, k), target names)
    for i, items in fed.items():
        src = sources[i]
        t = _time_ns(src, times[i])
        with np.errstate(over="ignore"):  # a sum or unit beyond float range is inf, refused with its line below
            values = np.column_stack([
                np.sum([_numbers(src, c, integer_ok=False) for c in e.columns], axis=0) * e.factor for e, _ in items])
        targets = [name for _, names in items for name in names]
        t, values = _ordered_rows(src, t, values, targets, repair, report)
        streams[i] = (t, values, targets)
        rate = 1e9 / float(np.median(np.diff(t))) if t.size > 1 else float("nan")
        report.sources.append({"path": str(src.path), "rows": src.table.num_rows, "rate_hz": rate,
                               "streams": sorted({_GROUP_OF[n] for n in targets})})
        report.conversions += [f"{src.path.name}: {e.describe()}" for e in (times[i], *(e for e, _ in items))]
    base = next(i for i, (_, _, targets) in streams.items() if "ax" in targets)
    t_base = streams[base][0]
    inside = np.ones(t_base.size, dtype=bool)
    for i, (t, _, targets) in streams.items():
        if i != base:
            inside &= (t_base >= t[0]) & (t_base <= t[-1])
    report.dropped_outside_overlap = int((~inside).sum())
    t_out = t_base[inside]
    if t_out.size < 2:
        raise ValueError(f"the streams overlap in {t_out.size} accelerometer sample(s); the files must cover the "
                         "same time span on one clock (check the time units)")
    columns = {}
    for i, (t, values, targets) in streams.items():
        if i == base:
            picked = values[inside]
        else:
            groups = {}
            for j, name in enumerate(targets):
                groups.setdefault(_GROUP_OF[name], []).append(j)
            picked = np.empty((t_out.size, values.shape[1]))
            for group, cols in groups.items():
                kind = {"label": "hold", "rotvec": "quaternion"}.get(group, "linear")
                picked[:, cols] = values_at(t_out, t, values[:, cols], kind)
                how = "held from the latest row" if group == "label" else (
                    "normalised linear interpolation" if group == "rotvec" else "linear interpolation")
                report.merge.append(f"{group} from {sources[i].path.name} ({1e9 / np.median(np.diff(t)):.1f} Hz, "
                                    f"largest step {np.diff(t).max() / 1e9:.3f} s) onto the accelerometer's "
                                    f"times by {how}")
        columns.update({name: picked[:, j] for j, name in enumerate(targets)})
    acc = np.column_stack([columns[c] for c in _GROUPS["acc"]])
    median = float(np.median(np.linalg.norm(acc, axis=1)))
    if median < _UNITS_SPLIT:
        raise ValueError(f"{sources[base].path}: after conversion the median |acc| is {median:.3g} m/s², which looks "
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
    log = SensorLog(
        t_out, acc, gyro=group("gyro"), rotvec=group("rotvec"), linacc=group("linacc"),
        label=label,
        meta={**(meta or {}), "source": "stairsense import", "imported_from": [str(s.path) for s in sources],
              "mapping": [e.describe() for e in entries], "units": "m/s2"},
    )
    report.samples = len(log)
    return log, report
