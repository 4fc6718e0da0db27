"""What the budget optimiser searches and how it scores (spec §3.4's search, and the
barometer): the grid of configurations, the F1 protocol, one priced point of the search and the
budget's syntax.

Kept apart from :mod:`._optimise` (which fits models) so the command line can show the defaults
in ``--help`` without loading NumPy or the models.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product

# The classifier is the shipped recipe's (a light import: the recipe builds models only when asked), with
# Λ and γ fixed so each fit is one solve and its landmark budget so the F1 is that of the model
# ``train --config best.json`` ships.
from stairsense.models import TRAIN_DEFAULTS
from stairsense.stream import PipelineConfig

__all__ = ["SearchSpace", "Protocol", "Candidate", "parse_budget"]


@dataclass(frozen=True)
class SearchSpace:
    """The grid; the default has 4 × 3 × 2 × 2 × 1 × 7 × 3 = 1008 configurations.

    ``barometers`` holds ``False`` (accelerometer only), ``True`` (the 7 height features from the
    barometer, ``PipelineConfig.barometer``) or both: with both, every front end has a barometer
    twin, scored on the same recordings under the same protocol, which must then carry air
    pressure (:func:`~._optimise.evaluate_all`).
    """

    rates: tuple = (20.0, 30.0, 50.0, 100.0)
    orientations: tuple = ("mizell", "rotvec", "linear")
    segmentations: tuple = ("pattern", "sliding")
    smoothings: tuple = ("time", "none")
    feature_counts: tuple = (3, 5, 10, 20, 30, 49, 79)
    precisions: tuple = ("fp32", "fp16", "int8")
    barometers: tuple = (False,)

    def front_ends(self) -> list[PipelineConfig]:
        return [PipelineConfig(rate_hz=r, orientation=o, segmentation=s, smoothing=m, barometer=b)
                for r, o, s, m, b in product(self.rates, self.orientations, self.segmentations, self.smoothings,
                                             self.barometers)]


@dataclass
class Candidate:
    """One point of the search: a configuration, its F1 and its battery cost."""

    config: dict
    k: int
    precision: str
    f1: float
    percent_per_day: float
    mah_per_day: float

    def label(self) -> str:
        c = self.config
        return (f"{c['rate_hz']:g} Hz {c['orientation']} {c['segmentation']} "
                f"{'smoothed' if c['smoothing'] != 'none' else 'raw'}{' barometer' if c.get('barometer') else ''} "
                f"k={self.k} {self.precision}")


def parse_budget(text: str) -> float:
    """``"1%/day"``, ``"1 %"`` or ``"1"`` → 1.0 (percent of the battery per day)."""
    cleaned = str(text).replace(" ", "").lower().removesuffix("/day").removesuffix("%")
    try:
        value = float(cleaned)
    except ValueError:
        raise ValueError(f"--budget {text!r} is not a percentage per day; write e.g. '1%/day'") from None
    if not value > 0:
        raise ValueError(f"--budget must be > 0 %/day, got {text!r}")
    return value



@dataclass(frozen=True)
class Protocol:
    """How F1 is measured, the same for every configuration (and part of the cache key).

    ``n_folds`` folds of subjects (``GroupKFold``); at most ``max_train`` training windows per
    fold, stratified, drawn with ``seed``; the classifier ``stairsense train`` ships by default:
    scale → EasyMKL top-k → KOMD with Λ and γ of :data:`~stairsense.models.TRAIN_DEFAULTS` under a budget of
    ``n_landmarks`` support vectors (Nyström, k-means landmarks seeded 0; ``None`` = exact KOMD).

    Folds and training windows are the optimiser's earlier protocol; the classifier was exact KOMD,
    which is not what ``train --config best.json`` produces and cost about twice the CPU time per
    front end: it keeps ~2000 support vectors on 3000 windows, and the export's reduced-set refit
    of every fp16/int8 graph is cubic in them (the two protocols side by side:
    benchmarks/results/energy.md). 5 folds (the README's protocol for the shipped model) cost
    1.8× the 3 folds' time.
    """

    n_folds: int = 3
    max_train: int = 3000
    n_landmarks: int | None = TRAIN_DEFAULTS.n_landmarks
    seed: int = 0

    def to_dict(self) -> dict:
        return {"folds": self.n_folds, "max_train": self.max_train, "landmarks": self.n_landmarks, "seed": self.seed,
                "lam": TRAIN_DEFAULTS.lam, "gamma": TRAIN_DEFAULTS.gamma}
