"""The whole front end: standardization then windowing, per sample or per log (DESIGN.md).

:class:`FrontEnd` is what the phone runs: ``push`` one raw sample, get back the windows that
close at it. :func:`run_front_end` is the batch path over a whole gap-free log (resampled to the
configuration's rate first, if it has one) and returns the standardized stream with the same windows. Sample indices of windows refer to the standardized
stream; ``Standardized.first`` maps them back to the input log.
"""
from __future__ import annotations

from dataclasses import dataclass

from ._config import PipelineConfig

from ._log import SensorLog
from ._resample import resample
from ._segment import WindowTable, make_windower
from ._standardize import Standardized, Standardizer, resolve_orientation

__all__ = ["FrontEnd", "FrontEndResult", "run_front_end"]


@dataclass(frozen=True)
class FrontEndResult:
    """Standardized samples of one log, its candidate windows, and the log they came from (resampled
    to the configuration's rate, if it has one: its labels and rate belong to the samples)."""

    standardized: Standardized
    windows: WindowTable
    log: SensorLog | None = None


def run_front_end(log: SensorLog, config: PipelineConfig) -> FrontEndResult:
    """Batch front end (spec §3.3–§3.5) over one gap-free log: resampled to ``config.rate_hz`` when
    it is set, else at the log's own rate."""
    if config.rate_hz is not None:
        log = resample(log, config.rate_hz)
    return FrontEnd(config, resolve_orientation(config, log), rate_hz=log.rate_hz).process(log)


class FrontEnd:
    """Per-sample front end: :class:`Standardizer` feeding the configured windower.

    ``push(t_ns, acc, gyro=None, rotvec=None, linacc=None)`` returns a list of the
    :class:`~stairsense.stream.Window` objects that close at this sample (usually empty).
    """

    def __init__(self, config: PipelineConfig, method: str, rate_hz: float | None = None):
        self.config = config
        self.standardizer = Standardizer(config, method, rate_hz)
        self.windower = make_windower(config)
        self._pattern = config.segmentation == "pattern"

    def reset(self):
        self.standardizer.reset()
        self.windower.reset()

    def process(self, log: SensorLog) -> FrontEndResult:
        """Consume a block (a :class:`SensorLog` chunk); state carries over as with ``push``.

        Window sample indices count standardized samples since the last ``reset``; the
        standardized block's ``first`` is relative to this chunk.
        """
        std = self.standardizer.process(log.t_ns, log.acc, gyro=log.gyro, rotvec=log.rotvec, linacc=log.linacc)
        return FrontEndResult(std, self.windower.process(std.t_ns, std.vertical), log)

    def push(self, t_ns, acc, gyro=None, rotvec=None, linacc=None):
        out = self.standardizer.push(t_ns, acc, gyro, rotvec, linacc)
        if out is None:
            return []
        t, _, vertical = out
        closed = self.windower.push(t, vertical)
        if self._pattern:
            return [] if closed is None else [closed]
        return closed
