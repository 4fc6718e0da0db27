"""JSON-describable kernels and feature maps for the online multi-task learner (spec §3.2, §3.7-1).

The server persists its parameters next to the state (SQLite, no pickle), and a client must
rebuild exactly the same kernel from a downloaded snapshot (spec §3.5: K̄, α, λ are public).
So every kernel and feature map here is a small frozen object whose ``spec`` is a plain
JSON dict, and ``from_spec(spec)`` rebuilds it.  Random Fourier features draw their
frequencies from ``numpy.random.default_rng(seed)``, so the spec (with the seed) fixes the
map bit for bit.

Kernels: ``linear`` (x·x' + offset), ``rbf`` (exp(−γ‖x−x'‖²)), ``exp_dot`` (exp(scale·x·x'),
the music kernel K̄ of spec §3.8), ``feature_map`` (the kernel φ(x)·φ(x') induced by a
feature map; used to check that feature-map mode equals kernel mode).
Feature maps: ``linear`` ([x, bias]) and ``rff`` (random Fourier features of the RBF kernel,
spec §1.6.3 / §3.7-1).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = [
    "DotProductKernel",
    "RBFKernel",
    "ExpDotKernel",
    "FeatureMapKernel",
    "LinearFeatureMap",
    "RandomFourierFeatures",
    "kernel_from_spec",
    "feature_map_from_spec",
]


def _rows(X):
    X = np.asarray(X, dtype=np.float64)
    return X[None, :] if X.ndim == 1 else X


class _Spec:
    """``spec`` = ``{"name": ..., **parameters}``, a JSON-serialisable description."""

    name = ""

    @property
    def spec(self):
        return {"name": self.name, **asdict(self)}


@dataclass(frozen=True)
class DotProductKernel(_Spec):
    """``k(x, x') = x·x' + offset`` (the offset plays the bias of spec §3.7-5)."""

    offset: float = 0.0
    name = "linear"

    def __call__(self, X1, X2):
        return _rows(X1) @ _rows(X2).T + self.offset


@dataclass(frozen=True)
class RBFKernel(_Spec):
    """``k(x, x') = exp(-gamma ||x - x'||²)``."""

    gamma: float = 1.0
    name = "rbf"

    def __call__(self, X1, X2):
        X1, X2 = _rows(X1), _rows(X2)
        sq = (X1 * X1).sum(1)[:, None] + (X2 * X2).sum(1)[None, :] - 2.0 * (X1 @ X2.T)
        return np.exp(-self.gamma * np.maximum(sq, 0.0))


@dataclass(frozen=True)
class ExpDotKernel(_Spec):
    """``k(x, x') = exp(scale · x·x')``: K̄ of the music experiment (spec §3.8, scale 1)."""

    scale: float = 1.0
    name = "exp_dot"

    def __call__(self, X1, X2):
        return np.exp(self.scale * (_rows(X1) @ _rows(X2).T))


@dataclass(frozen=True)
class LinearFeatureMap(_Spec):
    """``φ(x) = [x, bias]``: the linear kernel plus ``bias²`` as an explicit map (spec §3.7-1, -5)."""

    n_features_in: int
    bias: float = 1.0
    name = "linear"

    @property
    def n_components(self):
        return self.n_features_in + (1 if self.bias else 0)

    def __call__(self, X):
        X = _rows(X)
        if self.bias:
            return np.hstack([X, np.full((X.shape[0], 1), float(self.bias))])
        return X.copy()


@dataclass(frozen=True)
class RandomFourierFeatures(_Spec):
    """Random Fourier features: ``φ(x)·φ(x') ≈ exp(-gamma ||x - x'||²)`` (Rahimi–Recht; spec §3.7-1).

    ``φ(x) = sqrt(2/r) cos(W x + b)`` with ``W ~ N(0, 2 gamma I)`` and ``b ~ U[0, 2π)``, both
    drawn from ``default_rng(seed)`` so that ``spec`` fixes the map exactly.
    """

    n_features_in: int
    n_components: int = 256
    gamma: float = 1.0
    seed: int = 0
    name = "rff"

    def _weights(self):
        # Not cached on the frozen object: drawing is cheap next to any use of the map,
        # and recomputing keeps the object a plain value.
        rng = np.random.default_rng(self.seed)
        W = rng.normal(scale=np.sqrt(2.0 * self.gamma), size=(self.n_components, self.n_features_in))
        b = rng.uniform(0.0, 2.0 * np.pi, size=self.n_components)
        return W, b

    def __call__(self, X):
        W, b = self._weights()
        return np.sqrt(2.0 / self.n_components) * np.cos(_rows(X) @ W.T + b)


@dataclass(frozen=True)
class FeatureMapKernel(_Spec):
    """The kernel ``φ(x)·φ(x')`` induced by a feature map (given as its spec dict)."""

    feature_map: dict
    name = "feature_map"

    def __call__(self, X1, X2):
        phi = feature_map_from_spec(self.feature_map)
        return phi(X1) @ phi(X2).T


_KERNELS = {cls.name: cls for cls in (DotProductKernel, RBFKernel, ExpDotKernel, FeatureMapKernel)}
_FEATURE_MAPS = {cls.name: cls for cls in (LinearFeatureMap, RandomFourierFeatures)}


def _from_spec(spec, registry, what):
    if isinstance(spec, _Spec):
        return spec
    if not isinstance(spec, dict) or spec.get("name") not in registry:
        raise ValueError(f"{what} spec must be a dict with 'name' in {sorted(registry)}; got {spec!r}")
    params = {k: v for k, v in spec.items() if k != "name"}
    try:
        return registry[spec["name"]](**params)
    except TypeError as exc:
        raise ValueError(f"bad parameters for {what} {spec['name']!r}: {exc}") from None


def kernel_from_spec(spec):
    """Kernel object from ``{"name": ..., **params}`` (or the object itself)."""
    return _from_spec(spec, _KERNELS, "kernel")


def feature_map_from_spec(spec):
    """Feature-map object from ``{"name": ..., **params}`` (or the object itself)."""
    return _from_spec(spec, _FEATURE_MAPS, "feature map")
