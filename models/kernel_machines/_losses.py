"""Losses of the server-side kernel machines and their resolvent operators.

Each loss ``L(y, z)`` enters the objective of spec §1.1 as ``f_i(z) = C_i L(y_i, z)``.
The solvers of spec §1.4–1.5 only touch the loss through two things:

* its value, for the objective ``F(c) = sum_i C_i L(y_i, z_i) + c'z/2`` with ``z = Kc``;
* the operator ``-J_alpha(v)`` of spec §1.2–1.3, where ``J_alpha = (I + alpha (df)^-1)^-1``
  is the resolvent of the inverse subdifferential (the proximal map of ``alpha f*``).

The table of spec §1.3 (with errata E1 and E2 corrected) is implemented twice on purpose:
``Loss.neg_resolvent`` is vectorised numpy (used by the fixed-point solver and by the
reference coordinate descent), ``neg_resolvent_scalar`` is scalar ``math`` code compiled by
numba for the fast coordinate-descent inner loops.  Tests check both against a brute-force proximal oracle.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

__all__ = ["LOSS_NAMES", "Loss", "neg_resolvent_scalar"]

# The integer codes are what the compiled coordinate-descent kernels dispatch on.
LOSS_NAMES = (
    "hinge",
    "squared_hinge",
    "square",
    "absolute",
    "epsilon_insensitive",
    "huber",
    "logistic",
)
_CODE = {name: code for code, name in enumerate(LOSS_NAMES)}

# Classification losses read y as a +-1 label; the others read it as a real target.
_MARGIN_LOSSES = frozenset({"hinge", "squared_hinge", "logistic"})

_LOGISTIC_MAX_NEWTON = 100


@numba.njit(cache=True)
def _logistic_beta_scalar(a, C, alpha):
    """Root beta in (0, C) of ``alpha log((C - beta)/beta) - a - beta = 0`` (spec §1.3).

    Solved in the logit ``t = log(beta / (C - beta))``, where it reads
    ``h(t) = alpha t + a + C sigmoid(t) = 0``: ``h`` is increasing with ``h' >= alpha``
    and the root lies in the finite bracket ``[-(a + C)/alpha, -a/alpha]`` because
    ``0 < C sigmoid(t) < C``.  Safeguarded Newton inside that bracket cannot diverge,
    and working in ``t`` keeps ``beta`` accurate when it is close to 0 or to C.
    """
    lo = -(a + C) / alpha
    hi = -a / alpha
    t = 0.5 * (lo + hi)
    step_before = hi - lo
    for _ in range(_LOGISTIC_MAX_NEWTON):
        if t >= 0.0:
            s = 1.0 / (1.0 + math.exp(-t))
        else:
            e = math.exp(t)
            s = e / (1.0 + e)
        h = alpha * t + a + C * s
        if h > 0.0:
            hi = t
        else:
            lo = t
        slope = alpha + C * s * (1.0 - s)
        t_new = t - h / slope
        # Bisect when Newton leaves the bracket or does not halve the step ("rtsafe"):
        # in the flat tails of the sigmoid plain Newton can bounce for many iterations.
        if not (lo < t_new < hi) or abs(2.0 * h) > abs(step_before * slope):
            t_new = 0.5 * (lo + hi)
        step_before = t_new - t
        if abs(t_new - t) <= 1e-13 * (1.0 + abs(t)) or hi - lo <= 1e-13 * (1.0 + abs(t)):
            t = t_new
            break
        t = t_new
    if t >= 0.0:
        return C / (1.0 + math.exp(-t))
    e = math.exp(t)
    return C * e / (1.0 + e)


@numba.njit(cache=True)
def neg_resolvent_scalar(code, v, y, C, alpha, epsilon, delta):
    """``-J_alpha(v)`` for one sample, with ``f = C L(y, .)`` (spec §1.3, one row).

    Compiled by numba so the coordinate-descent loops of ``stairsense.models.kernel_machines._cd_compiled``
    can inline it; the independent numpy reference is ``Loss.neg_resolvent``.
    ``code`` is the index of the loss in ``LOSS_NAMES``.  ``C = 0`` (a zero sample
    weight) always gives 0, i.e. the sample drops out of the problem.
    """
    if C == 0.0:
        return 0.0
    if code == 0:  # hinge: y min(C, (alpha - y v)_+)
        return y * min(C, max(alpha - y * v, 0.0))
    if code == 1:  # squared hinge: y (alpha - y v)_+ / (1 + alpha/C)
        return y * max(alpha - y * v, 0.0) * C / (C + alpha)
    if code == 2:  # square: (alpha y - v) / (1 + alpha/C)
        return (alpha * y - v) * C / (C + alpha)
    r = alpha * y - v
    if code == 3:  # absolute: clip(alpha y - v, -C, C)
        return min(C, max(-C, r))
    if code == 4:  # epsilon-insensitive: sign(r) min(C, (|r| - alpha eps)_+)
        m = min(C, max(abs(r) - alpha * epsilon, 0.0))
        return m if r >= 0.0 else -m
    if code == 5:  # huber: clip(r / (1 + alpha delta / C), -C, C)
        return min(C, max(-C, r * C / (C + alpha * delta)))
    # logistic: y beta with beta the root of spec §1.3
    return y * _logistic_beta_scalar(y * v, C, alpha)


def _logistic_beta(a, C, alpha):
    """Vectorised twin of ``_logistic_beta_scalar`` (same bracketed Newton in the logit)."""
    a, C, alpha = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (a, C, alpha)))
    beta = np.zeros(a.shape)
    live = C > 0
    a, C, alpha = a[live], C[live], alpha[live]
    lo = -(a + C) / alpha
    hi = -a / alpha
    t = 0.5 * (lo + hi)
    step_before = hi - lo
    for _ in range(_LOGISTIC_MAX_NEWTON):
        s = _sigmoid(t)
        h = alpha * t + a + C * s
        hi = np.where(h > 0, t, hi)
        lo = np.where(h > 0, lo, t)
        slope = alpha + C * s * (1.0 - s)
        t_new = t - h / slope
        newton_ok = (lo < t_new) & (t_new < hi) & (np.abs(2.0 * h) <= np.abs(step_before * slope))
        t_new = np.where(newton_ok, t_new, 0.5 * (lo + hi))
        step_before = t_new - t
        done = np.abs(t_new - t) <= 1e-13 * (1.0 + np.abs(t))
        t = t_new
        if np.all(done | (hi - lo <= 1e-13 * (1.0 + np.abs(t)))):
            break
    beta[live] = C * _sigmoid(t)
    return beta


def _sigmoid(t):
    """Logistic function without overflow for large ``|t|``."""
    e = np.exp(-np.abs(t))
    return np.where(t >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


@dataclass(frozen=True)
class Loss:
    """One loss of spec §1.3 with its parameters.

    Parameters
    ----------
    name : {"hinge", "squared_hinge", "square", "absolute", "epsilon_insensitive", \
"huber", "logistic"}
        ``L(y, z)``: ``(1 - yz)_+``, ``(1 - yz)_+^2/2``, ``(y - z)^2/2``, ``|y - z|``,
        ``(|y - z| - epsilon)_+``, Huber with threshold ``delta`` on ``r = y - z``
        (``r^2/(2 delta)`` if ``|r| <= delta`` else ``|r| - delta/2``), and
        ``log(1 + exp(-yz))``.
    epsilon : float, default=0.1
        Width of the insensitive zone (``epsilon_insensitive`` only).
    delta : float, default=1.0
        Huber threshold (``huber`` only).

    Examples
    --------
    >>> import numpy as np
    >>> loss = Loss("hinge")
    >>> loss.value(np.array([1.0, -1.0]), np.array([0.5, 2.0]), 1.0)
    array([0.5, 3. ])
    >>> loss.neg_resolvent(np.array([0.2]), np.array([1.0]), 1.0, 1.0)
    array([0.8])
    """

    name: str
    epsilon: float = 0.1
    delta: float = 1.0

    def __post_init__(self):
        if self.name not in _CODE:
            raise ValueError(
                f"Unknown loss {self.name!r}: expected one of {', '.join(LOSS_NAMES)}. "
                "Pick one of those names."
            )
        if not (np.isfinite(self.epsilon) and self.epsilon >= 0):
            raise ValueError(f"Loss epsilon must be a finite number >= 0, got {self.epsilon!r}.")
        if not (np.isfinite(self.delta) and self.delta > 0):
            raise ValueError(f"Loss delta must be a finite number > 0, got {self.delta!r}.")

    @property
    def code(self) -> int:
        """Index of the loss in ``LOSS_NAMES`` (what the compiled kernels dispatch on)."""
        return _CODE[self.name]

    @property
    def is_margin(self) -> bool:
        """True when ``y`` is a +-1 label (hinge, squared hinge, logistic)."""
        return self.name in _MARGIN_LOSSES

    def value(self, y, z, C):
        """Per-sample terms ``C_i L(y_i, z_i)`` of ``f(z)`` (spec §1.1, eq. 2.3)."""
        y, z = np.asarray(y, dtype=float), np.asarray(z, dtype=float)
        name = self.name
        if name == "hinge":
            out = np.maximum(1.0 - y * z, 0.0)
        elif name == "squared_hinge":
            out = 0.5 * np.maximum(1.0 - y * z, 0.0) ** 2
        elif name == "square":
            out = 0.5 * (y - z) ** 2
        elif name == "absolute":
            out = np.abs(y - z)
        elif name == "epsilon_insensitive":
            out = np.maximum(np.abs(y - z) - self.epsilon, 0.0)
        elif name == "huber":
            r = np.abs(y - z)
            out = np.where(r <= self.delta, r**2 / (2 * self.delta), r - self.delta / 2)
        else:
            out = np.logaddexp(0.0, -y * z)
        return C * out

    def neg_resolvent(self, v, y, C, alpha):
        """``-J_alpha(v)`` elementwise (spec §1.3), vectorised; ``C``/``alpha`` broadcast.

        ``alpha`` may be an array: coordinate descent uses ``alpha_i = 1/k_ii`` (spec §1.5).
        Rows with ``C_i = 0`` give 0.
        """
        v, y = np.asarray(v, dtype=float), np.asarray(y, dtype=float)
        C = np.broadcast_to(np.asarray(C, dtype=float), v.shape)
        alpha = np.broadcast_to(np.asarray(alpha, dtype=float), v.shape)
        name = self.name
        # C/(C + alpha) instead of 1/(1 + alpha/C): same value, and 0 rather than 0/0 at C = 0.
        if name == "hinge":
            return y * np.minimum(C, np.maximum(alpha - y * v, 0.0))
        if name == "squared_hinge":
            return y * np.maximum(alpha - y * v, 0.0) * C / (C + alpha)
        if name == "square":
            return (alpha * y - v) * C / (C + alpha)
        if name == "logistic":
            return y * _logistic_beta(y * v, C, alpha)
        r = alpha * y - v
        if name == "absolute":
            return np.clip(r, -C, C)
        if name == "epsilon_insensitive":
            return np.sign(r) * np.minimum(C, np.maximum(np.abs(r) - alpha * self.epsilon, 0.0))
        # huber
        return np.clip(r * C / (C + alpha * self.delta), -C, C)
