"""What a reader did to a file besides parsing it: the named repairs and their report."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the command line's parser reads REPAIRS; NumPy is for the readers that note lines
    import numpy as np

__all__ = ["REPAIRS", "LogRepairedWarning", "RepairAction", "ReadReport"]

#: Repairs a reader can apply instead of failing; each one is reported in :class:`ReadReport`.
#: ``sort`` reorders (holding the whole file), ``dedupe`` drops repeated timestamps (sensor batching),
#: ``drop-nan`` drops nan/inf samples, ``drop-impossible`` samples with a value beyond any phone
#: sensor's range (a damaged field), ``trim-startup`` drops a slow or bursty start-up stretch,
#: ``split-gaps`` restarts at every gap longer than the front end bridges.
REPAIRS = ("sort", "dedupe", "drop-nan", "drop-impossible", "trim-startup", "split-gaps")
_FIRST_LINES_KEPT = 5


class LogRepairedWarning(UserWarning):
    """A reader repaired a log and the caller did not ask for the :class:`ReadReport`."""


@dataclass
class RepairAction:
    """What one repair changed: how many rows, and the first file lines it touched."""

    repair: str
    what: str
    count: int = 0
    first_lines: list[int] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.repair}: {self.what}: {self.count} rows (first lines {self.first_lines})"


@dataclass
class ReadReport:
    """Everything a reader did to a file besides parsing it.

    Attributes
    ----------
    path : str
        The file read.
    units : {"m/s2", "g"}
        Units the accelerometer had in the file (``"g"`` was converted to m/s²).
    rows_read, rows_kept : int
        Data lines parsed, and samples returned after the repairs.
    actions : list of RepairAction
        One entry per kind of change, with counts and the first file lines affected. Empty when
        nothing was repaired.
    segments : list of (int, int)
        First and last file line of each gap-free segment (one entry unless ``"split-gaps"`` split).
    """

    path: str = ""
    units: str = "m/s2"
    rows_read: int = 0
    rows_kept: int = 0
    actions: list[RepairAction] = field(default_factory=list)
    segments: list[tuple[int, int]] = field(default_factory=list)

    @property
    def repaired(self) -> bool:
        """True when a repair changed, dropped or split anything."""
        return bool(self.actions) or len(self.segments) > 1

    def _note(self, repair: str, what: str, lines: np.ndarray) -> None:
        if lines.size == 0:
            return
        action = next((a for a in self.actions if a.repair == repair and a.what == what), None)
        if action is None:
            action = RepairAction(repair, what)
            self.actions.append(action)
        action.count += int(lines.size)
        room = _FIRST_LINES_KEPT - len(action.first_lines)
        in_order = lines.copy()
        in_order.sort()
        action.first_lines.extend(int(v) for v in in_order[:room])

    def to_dict(self) -> dict:
        """The report as JSON-ready values (``--json`` output of the CLI)."""
        return {"path": self.path, "units": self.units, "rows_read": self.rows_read, "rows_kept": self.rows_kept,
                "actions": [{"repair": a.repair, "what": a.what, "count": a.count, "first_lines": a.first_lines}
                            for a in self.actions],
                "segments": [list(s) for s in self.segments]}

    def summary(self) -> str:
        parts = [str(a) for a in self.actions]
        if len(self.segments) > 1:
            parts.append(f"split-gaps: {len(self.segments)} segments starting at lines "
                         f"{[s[0] for s in self.segments[:_FIRST_LINES_KEPT]]}")
        return f"{self.path}: " + "; ".join(parts) if parts else f"{self.path}: no repairs"
