"""Step-shape and step-context features: what Table 12.1 lacks for phones off the waist.

The 79 features of Table 12.1 (:mod:`._window_features`) describe one window's spread and
correlations. ``benchmarks/bench_robust_research.py`` (results/robust_research.md, row B) found
that adding the 36 features below lifts the shipped classifier on UCI HAPT leave-subjects-out
from F1 0.903 to 0.951 and stairs-up recall from 0.868 to 0.929. They read two signals per
sample, the same for every orientation method, so the phone needs nothing else:

* ``z`` — vertical dynamic acceleration (``Standardized.vertical``), m/s²;
* ``h`` — horizontal magnitude of the dynamic acceleration (‖(x, y)‖ of the ENU sample, or the
  norm of Mizell's horizontal component): without a rotation vector North is unknown, and only
  the vertical axis and the horizontal *magnitude* do not depend on the phone's heading.

Shape of one step (19 features, :data:`STEP_SHAPE_NAMES`), σ = Std(z) + 1e-9, n samples, dt:

* duration n·dt; skewness and kurtosis of z (population moments of (z − z̄)/σ); where in the
  step z peaks and bottoms (argmax/n, argmin/n); the share of samples with z > 0; σ, range, max
  and min of z. A waist phone, a hand and a neck pouch move with very different amplitudes over
  the same gait, so the amplitude-free statistics carry the gait and the others the placement.
* h: mean, Std + 1e-9, range; Std(h)/σ; Corr(z, h) = mean((z − z̄)(h − h̄)) / (σ · Std(h)).
* vertical excursion: v and d are z integrated once and twice inside the step (trapezoid rule,
  v = d = 0 at the first sample). The velocity at the step's start is unknown, so the excursion
  is taken *relative to constant-velocity motion*: the range of d minus its least-squares line
  (0 for n ≤ 2), that range over σ·(n·dt)² + 1e-9 (amplitude-free), d at the step's end, and the
  range of v. The height gained per step is not observable this way: climbing at a steady pace
  has zero mean vertical acceleration; only a barometer would measure it.

Context over the kept steps (17 features): for eight of the shape features
(:data:`STEP_CONTEXT_OF`), the mean and the coefficient of variation Std / (|mean| + 1e-6) over this
step and up to ``context − 1`` kept steps before it, and how many steps that block holds. A run of
steps ends where the time from one window's end to the next one's start exceeds ``max_gap_s``
(standing still, a rejected stretch), or at :meth:`StepContext.reset` (a new segment). The context
is causal — a phone has it the moment the step closes — and lets the classifier see the rhythm of a
flight rather than one step.

The batch form :func:`step_context_features` runs the streaming :class:`StepContext` over the rows,
so the two cannot drift apart; ``tests/test_step_context.py`` checks both against a direct reading
of the definitions and scipy.
"""
from __future__ import annotations

from collections import deque

import numpy as np

__all__ = [
    "STEP_SHAPE_NAMES",
    "STEP_CONTEXT_OF",
    "STEP_CONTEXT_NAMES",
    "step_context_columns",
    "step_shape",
    "step_shape_features",
    "step_context_features",
    "StepContext",
    "StepRun",
]

STEP_SHAPE_NAMES: tuple[str, ...] = (
    "step_duration_s", "step_z_skew", "step_z_kurt", "step_z_argmax", "step_z_argmin", "step_z_pos_share",
    "step_z_std", "step_z_range", "step_z_max", "step_z_min", "h_mean", "h_std", "h_range", "h_over_z_std",
    "corr_z_h", "dz_range", "dz_end", "dz_range_norm", "vz_range",
)
STEP_CONTEXT_OF: tuple[str, ...] = (
    "step_duration_s", "step_z_std", "step_z_range", "h_over_z_std", "dz_range", "step_z_skew", "dz_range_norm",
    "step_z_argmax",
)
STEP_CONTEXT_NAMES: tuple[str, ...] = (
    STEP_SHAPE_NAMES
    + tuple(f"ctx_mean_{n}" for n in STEP_CONTEXT_OF)
    + tuple(f"ctx_cv_{n}" for n in STEP_CONTEXT_OF)
    + ("ctx_n_steps",)
)
_CONTEXT_COLUMNS = np.array([STEP_SHAPE_NAMES.index(n) for n in STEP_CONTEXT_OF])
# Guards of the ratios, as in the research that measured these features: σ + 1e-9 keeps a flat
# step finite; 1e-6 keeps the coefficient of variation of a zero-mean feature finite.
_STD_EPS, _CV_EPS = 1e-9, 1e-6


def step_shape(z: np.ndarray, h: np.ndarray, dt: float) -> np.ndarray:
    """The 19 :data:`STEP_SHAPE_NAMES` features of one window (module docstring)."""
    z = np.asarray(z, dtype=np.float64)
    h = np.asarray(h, dtype=np.float64)
    n = z.size
    if n == 0 or h.size != n:
        raise ValueError(f"step_shape needs z and h of the same non-zero length, got {z.size} and {h.size}")
    duration = n * dt
    zd = z - z.mean()
    sd = float(np.sqrt(np.mean(zd * zd))) + _STD_EPS
    zc = zd / sd
    hd = h - h.mean()
    hs = float(np.sqrt(np.mean(hd * hd))) + _STD_EPS
    v = np.concatenate([[0.0], np.cumsum((z[1:] + z[:-1]) * (0.5 * dt))])
    d = np.concatenate([[0.0], np.cumsum((v[1:] + v[:-1]) * (0.5 * dt))])
    if n > 2:
        t = np.arange(n) * dt
        td = t - t.mean()
        slope = float(td @ (d - d.mean())) / float(td @ td)
        excursion = float(np.ptp(d - (d.mean() + slope * td)))
    else:  # a line through ≤ 2 points fits them exactly
        excursion = 0.0
    return np.array([
        duration, np.mean(zc**3), np.mean(zc**4), np.argmax(z) / n, np.argmin(z) / n, np.mean(z > 0),
        sd, np.ptp(z), z.max(), z.min(),
        h.mean(), hs, np.ptp(h), hs / sd, float(zd @ hd) / n / (sd * hs),
        excursion, d[-1], excursion / (sd * duration**2 + _STD_EPS), np.ptp(v),
    ])


def step_shape_features(z: np.ndarray, h: np.ndarray, offsets: np.ndarray, dt: float) -> np.ndarray:
    """(m, 19) shape features of the ragged windows ``[offsets[i], offsets[i + 1])`` of z and h."""
    offsets = np.asarray(offsets)
    return np.array([step_shape(z[a:b], h[a:b], dt) for a, b in zip(offsets[:-1], offsets[1:])]).reshape(
        -1, len(STEP_SHAPE_NAMES))


class StepRun:
    """The block of the last ``size`` kept windows of a run, this one included: what every context
    feature (the step context here, the height context of :mod:`._height_features`) is taken over.

    A run ends where the time from one window's end to the next one's start exceeds ``max_gap_s``
    (module docstring), or at :meth:`reset`. One rule in one place, so the step context and the
    height context always cover the same steps.

    Parameters
    ----------
    size : int ≥ 1
    max_gap_s : float > 0
    owner : str
        Named in the errors (the class whose parameters these are).

    Examples
    --------
    >>> run = StepRun(2, 1.5)
    >>> list(run.push("a", 0, 10**9)), list(run.push("b", 10**9, 2 * 10**9)), list(run.push("c", 4 * 10**9, 5 * 10**9))
    (['a'], ['a', 'b'], ['c'])
    """

    def __init__(self, size: int = 5, max_gap_s: float = 1.5, owner: str = "StepRun"):
        if int(size) != size or size < 1:
            raise ValueError(f"{owner} context must be an integer >= 1, got {size!r}")
        if not max_gap_s > 0:
            raise ValueError(f"{owner} max_gap_s must be > 0, got {max_gap_s!r}")
        self.size = int(size)
        self.max_gap_s = float(max_gap_s)
        self.reset()

    def reset(self) -> "StepRun":
        """Forget every window: a new segment starts."""
        self._items: deque = deque(maxlen=self.size)
        self._last_end_ns: int | None = None
        return self

    def push(self, item, t_start_ns: int, t_end_ns: int) -> deque:
        """Append the window that just closed (``item``, anything) and return the block, oldest first
        (the returned deque is the run's own: read it before the next push)."""
        if self._last_end_ns is not None and (int(t_start_ns) - self._last_end_ns) / 1e9 > self.max_gap_s:
            self._items.clear()
        self._last_end_ns = int(t_end_ns)
        self._items.append(item)
        return self._items


class StepContext:
    """Streaming step context: push each kept window as it closes, get its 36 features.

    Parameters
    ----------
    context : int, default=5
        Steps in the context block, this one included (≥ 1).
    max_gap_s : float, default=1.5
        A longer time between one kept window's end and the next one's start starts a new run.

    Examples
    --------
    >>> ctx = StepContext(context=2)
    >>> z = np.sin(np.linspace(0, 2 * np.pi, 30)); h = np.abs(z)
    >>> first = ctx.push(z, h, 1 / 30, 0, 10**9)
    >>> second = ctx.push(z, h, 1 / 30, 10**9, 2 * 10**9)
    >>> int(first[-1]), int(second[-1])
    (1, 2)
    """

    def __init__(self, context: int = 5, max_gap_s: float = 1.5):
        self._run = StepRun(context, max_gap_s, "StepContext")
        self.context, self.max_gap_s = self._run.size, self._run.max_gap_s

    def reset(self) -> "StepContext":
        """Forget every step: a new segment starts (a sensor gap, a restart)."""
        self._run.reset()
        return self

    def push(self, z, h, dt: float, t_start_ns: int, t_end_ns: int) -> np.ndarray:
        """The 36 :data:`STEP_CONTEXT_NAMES` features of the window that just closed."""
        return self.push_shape(step_shape(z, h, dt), t_start_ns, t_end_ns)

    def push_shape(self, shape_row: np.ndarray, t_start_ns: int, t_end_ns: int) -> np.ndarray:
        """Like :meth:`push`, from the window's precomputed :func:`step_shape` row."""
        block = np.array(self._run.push(shape_row[_CONTEXT_COLUMNS], t_start_ns, t_end_ns))
        mean = block.mean(axis=0)
        cv = block.std(axis=0) / (np.abs(mean) + _CV_EPS)
        return np.concatenate([shape_row, mean, cv, [len(block)]])


def step_context_features(shape: np.ndarray, t_start_ns, t_end_ns, *, context: int = 5,
                          max_gap_s: float = 1.5) -> np.ndarray:
    """(m, 36) step-context features of consecutive kept windows of one stream, from their
    (m, 19) :func:`step_shape_features` and times: the streaming :class:`StepContext` run over them."""
    shape = np.asarray(shape, dtype=np.float64).reshape(-1, len(STEP_SHAPE_NAMES))
    ctx = StepContext(context, max_gap_s)
    out = np.empty((shape.shape[0], len(STEP_CONTEXT_NAMES)))
    for i, (row, a, b) in enumerate(zip(shape, t_start_ns, t_end_ns)):
        out[i] = ctx.push_shape(row, a, b)
    return out


def step_context_columns(feature_names) -> int:
    """How many trailing columns of ``feature_names`` are step-context features: 36 or 0.

    Raises
    ------
    ValueError
        When some, but not all 36 in order at the end, are there: the graph could not feed them.
    """
    return trailing_columns(feature_names, STEP_CONTEXT_NAMES, "STEP_CONTEXT_NAMES", "step-context",
                            "after the Table 12.1 ones")


def trailing_columns(feature_names, block: tuple[str, ...], block_name: str, what: str, where: str) -> int:
    """``len(block)`` when ``feature_names`` end with ``block`` in order, 0 when they hold none of
    it; a ValueError naming ``what`` features (``block_name``) and ``where`` they belong when some
    stray elsewhere.
    The one reading of a model's feature names for every block of extra columns (step context,
    height)."""
    names = list(feature_names)
    n = len(block)
    if tuple(names[-n:]) == tuple(block):
        return n
    stray = sorted(set(names) & set(block))
    if stray:
        raise ValueError(
            f"the model's {what} features must be the {n} {block_name}, in order, {where}; got {len(stray)} of them "
            f"elsewhere (e.g. {stray[0]!r}): train it on stairsense.window_dataset features"
        )
    return 0
