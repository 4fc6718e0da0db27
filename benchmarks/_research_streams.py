"""Standardized streams and kept step windows of UCI HAPT, Oxford and the simulator, cached on disk.

``_robust_data`` caches only the 79 Table 12.1 features per window; the research benchmark
(``bench_robust_research.py``) also needs each window's samples and its neighbours in time (features
over the steps before it, the vertical trajectory inside it), so this module keeps, per recording, the
standardized ENU samples the front end produced and the kept, unambiguous windows into them.

Each stream is a dict: ``samples`` (m, 3) ENU dynamic acceleration, ``start``/``stop`` sample
indices of the labelled kept windows (every kept window, ambiguous ones included, is in
``all_start``/``all_stop`` so context features see the true step sequence), ``y`` (1 = STAIR, -1 =
ambiguous), ``direction`` (2 up, 3 down), ``subject``, ``placement``, ``dataset``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from _common import cached_pickle
from _robust_data import oxford_logs, simulated_placement_logs

CACHE = Path(__file__).resolve().parent / "out" / "robust_research"


def _stream(log, config, meta):
    from stairsense.features import window_labels
    from stairsense.stream import run_front_end

    result = run_front_end(log, config)
    log = result.log
    std, windows = result.standardized, result.windows
    kept = windows.kept
    index, offsets = windows.sample_index(kept)
    y, direction = window_labels(log.label, std.first + index, offsets)
    return dict(samples=std.samples.astype(np.float32), start=windows.start[kept], stop=windows.stop[kept],
                y=y, direction=direction, rate_hz=float(config.rate_hz or log.rate_hz), **meta)


def _cached(name: str, config, build):
    return cached_pickle(CACHE, name, build, name, config.to_json())


def uci_streams(config):
    """The 42 UCI HAPT experiments (waist phone, 21 subjects)."""
    from _common import data_dir

    from stairsense.stream import load_uci_hapt

    def build():
        return [_stream(log, config, dict(subject=f"uci{log.meta['subject']}", placement="waist", dataset="uci"))
                for log in load_uci_hapt(data_dir("uci-hapt", "RawData"))]

    return _cached("uci", config, build)


def oxford_streams(config):
    """The 48 Oxford level-walking recordings (three users, six or seven placements), all NO_STAIR."""
    def build():
        return [_stream(log, config, dict(subject=log.meta["subject"].lower(), placement=log.meta["placement"].lower(),
                                          dataset="oxford", device=log.meta["device"]))
                for log in oxford_logs()]

    return _cached("oxford", config, build)


def simulated_streams(config, *, people=6, minutes=6.0, rate_hz=50.0, seed0=100):
    """Simulated people with stairs in four placements; the same logs as ``_robust_data.simulated_windows``."""
    def build():
        logs = simulated_placement_logs(people=people, minutes=minutes, rate_hz=rate_hz, seed0=seed0)
        return [_stream(log, config, dict(subject=log.meta["subject"], placement="sim_" + log.meta["placement"],
                                          dataset="sim"))
                for log in logs]

    return _cached(f"sim{people}x{minutes:g}@{rate_hz:g}", config, build)
