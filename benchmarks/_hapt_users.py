"""UCI HAPT windows with one task per subject, built once and cached under ``benchmarks/out/``.

Used by the OKL / MT-ONMKL benchmarks. The configuration is 30 Hz with time smoothing and
``orientation="auto"``, resolved on the raw UCI logs as ``stairsense train`` resolves it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from _common import data_dir, source_key

OUT = Path(__file__).resolve().parent / "out"
HAPT_CONFIG = dict(orientation="auto", smoothing="time", rate_hz=30, step_context=0)


def hapt_user_windows(data: Path | None = None):
    """(X, y, groups, provenance): window features, STAIR label (1) or not (0), subject id per window."""
    from stairsense import PipelineConfig, window_dataset
    from stairsense.stream import load_uci_hapt

    data = data or data_dir("uci-hapt", "RawData")
    config = PipelineConfig(**HAPT_CONFIG)
    cache = OUT / "hapt_users" / f"windows_{source_key(config.to_json(), str(data))}.npz"
    if not cache.exists():
        dataset = window_dataset(load_uci_hapt(data), config, progress=True)
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp.npz")
        np.savez(tmp, X=dataset.X, y=dataset.y, groups=dataset.groups.astype(np.int64))
        tmp.rename(cache)
    cached = np.load(cache)
    return cached["X"], cached["y"], cached["groups"], f"`{cache.relative_to(OUT.parent)}` ({config.to_json()})"


if __name__ == "__main__":
    X, y, groups, provenance = hapt_user_windows()
    print(X.shape, np.bincount(y.astype(int)), len(np.unique(groups)), provenance)
