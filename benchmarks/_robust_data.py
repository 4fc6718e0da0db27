"""Window tables for the robustness benchmarks, cached on disk (UCI HAPT, Oxford, simulated placements).

Each table is ``(X, y, meta)`` with one row per kept window: the configuration's features (the 79 of
Table 12.1, then the 36 step-context ones when ``step_context > 0``), 1 = STAIR, and a dict of
per-window arrays (``subject``, ``placement``, ``device``, ``dataset``). Building them runs every
recording through the front end once per configuration (minutes on a shared machine), so the
result is cached under ``benchmarks/out/robust``, keyed by the configuration and the front-end code.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from _common import cached_pickle, data_dir

CACHE = Path(__file__).resolve().parent / "out" / "robust"


def _cached(name: str, config, build):
    return cached_pickle(CACHE, name, build, name, config.to_json())


def _table(logs, config, meta_of):
    from stairsense import window_dataset

    ds = window_dataset(logs, config, progress=True)
    meta = {key: np.array([meta_of(logs[i])[key] for i in ds.log_index]) for key in meta_of(logs[0])}
    meta["direction"] = ds.direction
    meta["log"] = ds.log_index
    return ds.X, ds.y, meta


def uci_windows(config):
    """Kept, unambiguous windows of the 42 UCI HAPT experiments (waist phone, 50 Hz native)."""
    from stairsense.stream import load_uci_hapt

    def build():
        logs = load_uci_hapt(data_dir("uci-hapt", "RawData"))
        return _table(logs, config, lambda log: {"subject": f"uci{log.meta['subject']}", "placement": "waist",
                                                 "device": "GalaxySII", "dataset": "uci"})

    return _cached("uci", config, build)


def oxford_logs():
    """The 48 Oxford level-walking recordings with every sample labelled WALKING (NO_STAIR)."""
    from dataclasses import replace

    from stairsense.stream import Activity, load_oxford, oxford_recordings

    logs = []
    for folder in oxford_recordings(data_dir("oxford-stepcounter", "optimisation")):
        log = load_oxford(folder)
        if "placement" not in log.meta:  # the patient recording has no placement in its name
            continue
        logs.append(replace(log, label=np.full(log.t_ns.size, int(Activity.WALKING), np.int64)))
    return logs


def oxford_windows(config):
    """Kept windows of the Oxford recordings (all NO_STAIR), with user, placement and phone."""
    def build():
        logs = oxford_logs()
        return _table(logs, config, lambda log: {"subject": log.meta["subject"].lower(),
                                                 "placement": log.meta["placement"].lower(),
                                                 "device": log.meta["device"], "dataset": "oxford"})

    return _cached("oxford", config, build)


SIM_PLACEMENTS = ("trouser_pocket", "jacket_pocket", "hand", "bag")


def simulated_placement_logs(*, people=6, minutes=6.0, rate_hz=50.0, seed0=100):
    """One simulated log per (person, placement), with ``subject`` and ``placement`` in its meta."""
    from stairsense.stream import simulate

    logs = []
    for p in range(people):
        for j, placement in enumerate(SIM_PLACEMENTS):
            log = simulate(minutes=minutes, rate_hz=rate_hz, seed=seed0 + 10 * p + j, placement=placement)
            log.meta.update(subject=f"sim{p}", placement=placement)
            logs.append(log)
    return logs


def simulated_windows(config, *, people=6, minutes=6.0, rate_hz=50.0, seed0=100):
    """Windows of simulated people with stairs, one log per (person, placement)."""
    def build():
        logs = simulated_placement_logs(people=people, minutes=minutes, rate_hz=rate_hz, seed0=seed0)
        return _table(logs, config, lambda log: {"subject": log.meta["subject"],
                                                 "placement": "sim_" + log.meta["placement"],
                                                 "device": "simulated", "dataset": "sim"})

    return _cached(f"sim{people}x{minutes:g}@{rate_hz:g}", config, build)


if __name__ == "__main__":
    import sys

    from stairsense import PipelineConfig

    for orientation in sys.argv[1:] or ["vertical"]:
        cfg = PipelineConfig(rate_hz=30, orientation=orientation)
        for fn in (uci_windows, oxford_windows, simulated_windows):
            if orientation == "ahrs" and fn is oxford_windows:
                continue  # no gyroscope in the Oxford recordings
            X, y, meta = fn(cfg)
            print(orientation, fn.__name__, X.shape, int(y.sum()), flush=True)
