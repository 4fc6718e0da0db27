"""Exact online client–server multi-task learner (spec §3, thesis Ch. 5, Algs 4–9 corrected).

Problem (spec §3.2): tasks (phone users) ``j`` send triples ``(x, y, w)``; the learner keeps the
exact minimiser of ``Σ_i (y_i − g(x_i, t_i))² / (2λ w_i) + ‖g‖²/2`` under the mixed-effect kernel
``K = α K̄ + (1−α) δ_{t t'} K̃``: a shared component ``ḡ`` (weight α) plus a personal one ``g̃_j``.
α = 1 pools all users, α = 0 learns each user alone.

How the state is kept (spec §3.3 notation; ``Z_j`` maps task j's entries to shared coordinates:
the selection ``P_j`` onto the unique inputs X̌ in *exact mode*, the feature rows ``Φ_j`` in
*feature-map mode* §3.7-1):

* per task: ``h^j`` (input ids), ``y^j``, ``w^j`` (repeats merged, §3.3 "duplicates"), and
  ``R^j = ((1−α) K̃^j + λ W^j)^{-1}``, updated exactly per triple by the task part of Alg. 5:
  Case 2 bordered inverse (Lemma 10), Case 1 Sherman–Morrison weight change with the corrected
  γ (erratum E7, E8), deletion §3.7-2.  Every case is ``R^j ← R^j + γ u uᵀ`` and
  ``R^j y^j`` moves by ``μ u``;
* shared sufficient statistics ``A = Σ_j Z_jᵀ R^j Z_j`` and ``b = Σ_j Z_jᵀ R^j y^j``, which take
  exactly the same rank-one step ``A += γ ũũᵀ``, ``b += μ ũ`` with ``ũ = Z_jᵀ u``;
* exact mode also keeps the LDLᵀ factor of ``Ǩ = K̄(X̌, X̌)`` by bordering (Alg. 8 / Case 3,
  with the β > ε K̄(x, x) guard of §3.7-3).

The disclosed state of the thesis follows in closed form (A.4): ``y̌ = Lᵀ b`` and
``H = (D^{-1} + α Lᵀ A L)^{-1}``; in feature-map mode ``L = I``, ``D = I``, so ``H = (I + αA)^{-1}``
and ``y̌ = b`` are r×r and r, whatever the number of inputs.

Design choice [proposal, replacing Alg. 5's per-update H downdate]: Alg. 5 keeps H current
with one O(n²) Sherman–Morrison step per triple.  The ``A, b`` statistics above change
only on the ℓ_j coordinates of the updating task (exact mode), so an update costs
O(ℓ_j²) (+ O(n²) once per new unique input) instead of O(n²), and ``H``, ``y̌`` are formed on
demand in O(n³) when a snapshot is published — which spec §3.6 recommends doing only at
intervals anyway.  The Sherman–Morrison form of Alg. 5 is what a *client* runs
(:mod:`._online_client`), where it replays only its own few triples.  ``H`` is formed as
``D^{1/2} (I + α D^{1/2} Lᵀ A L D^{1/2})^{-1} D^{1/2}`` (a Cholesky of a matrix with eigenvalues
≥ 1) rather than by inverting ``D^{-1}`` (§3.7-3 numerical hygiene), and the server computes
``č = b − α A L z`` (= Pᵀc, spec §3.3) without the back substitution through ``D``.

Determinism: the state is a pure function of the sequence of calls (no randomness, no
hashing of floats beyond exact byte equality, no threading in the reductions), so replaying
the same update log — from scratch or from a :meth:`snapshot` — gives bit-identical arrays.
"""
from __future__ import annotations

import json
import math
from numbers import Integral, Real

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular

from ._feature_maps import feature_map_from_spec, kernel_from_spec
from ._online_compiled import INSERT, REMOVE, REPEAT, task_step

__all__ = ["OnlineMultiTaskLearner", "UnknownEntryError", "FrozenState", "SNAPSHOT_FORMAT"]

SNAPSHOT_FORMAT = "stairsense-online-mtl/1"


_EMPTY = np.zeros(0)
_EMPTY2 = np.zeros((0, 0))


def _finite(name, value):
    """``float(value)``, or a ValueError naming the argument if it is not a finite number."""
    try:
        if isinstance(value, (str, bytes)):  # float("1.5") would silently parse text
            raise TypeError
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number, got {value!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return out


class UnknownEntryError(KeyError):
    """``delete`` named a (task, key) entry the learner does not hold."""


def check_task_id(task):
    """Task ids are ints or strings (JSON round-trips them unchanged); numpy ints become int."""
    if isinstance(task, (bool, np.bool_)):
        raise ValueError(f"task id must be an int or a str, got the bool {task!r}")
    if isinstance(task, Integral):
        return int(task)
    if isinstance(task, str):
        return task
    raise ValueError(f"task id must be an int or a str, got {type(task).__name__} {task!r}")


def _grow(array, capacity, square):
    """Copy ``array`` into a zero buffer of leading size ``capacity`` (both axes if ``square``)."""
    shape = (capacity, capacity) if square else (capacity,) + array.shape[1:]
    out = np.zeros(shape, dtype=array.dtype)
    if square:
        out[: array.shape[0], : array.shape[1]] = array
    else:
        out[: array.shape[0]] = array
    return out


def ldl_border(L, D, n, kbar, kxx, pivot_tol):
    """Append input ``n`` to ``Ǩ = L D Lᵀ`` in place (Alg. 8 lines 3–7, spec §3.4 Case 3).

    ``kbar`` = K̄(x, x̌_1..x̌_n), ``kxx`` = K̄(x, x).  Solves ``L D r = kbar``, writes row ``n`` of
    ``L`` as ``[rᵀ, 1]`` and the pivot ``β = kxx − rᵀDr`` into ``D[n]``.  Raises ``ValueError`` if
    ``β ≤ pivot_tol · kxx`` (§3.7-3 guard: K̄ numerically singular at x).
    """
    rD = solve_triangular(L[:n, :n], kbar, lower=True, unit_diagonal=True) if n else kbar
    r = rD / D[:n]
    beta = kxx - rD @ r
    if not beta > pivot_tol * abs(kxx):
        raise ValueError(
            f"shared kernel is numerically singular at a new input (pivot {beta:.3g} <= "
            f"{pivot_tol:g} * K(x, x)): use a strictly positive definite shared_kernel, "
            "or feature-map mode (feature_map=...) for continuous inputs"
        )
    L[n, :n] = r
    L[n, n] = 1.0
    D[n] = beta


class _Task:
    """One task's private state (spec §3.4 "undisclosed"): the first ``size`` slots are live."""

    __slots__ = ("h", "y", "w", "R", "size", "pos", "frozen")

    def __init__(self, capacity=8):
        self.h = np.zeros(capacity, dtype=np.int64)
        self.y = np.zeros(capacity)
        self.w = np.zeros(capacity)
        self.R = np.zeros((capacity, capacity))
        self.size = 0
        self.pos = {}  # input id -> position in h
        self.frozen = False  # a FrozenState holds h, y, w, R: copy them before the next change

    def thaw(self):
        """Copy-on-write: give this task private arrays before changing them in place."""
        if self.frozen:
            self.h, self.y, self.w, self.R = self.h.copy(), self.y.copy(), self.w.copy(), self.R.copy()
            self.frozen = False

    def reserve(self, size):
        if size > self.h.shape[0]:
            capacity = max(size, 2 * self.h.shape[0])
            self.h, self.y, self.w = (_grow(a, capacity, False) for a in (self.h, self.y, self.w))
            self.R = _grow(self.R, capacity, True)

    def step(self, kind, p, s, krow, Kt, one_minus_alpha, y, w, lam, A, b, Phi):
        """The task part of Alg. 5 / §3.7-2 plus the shared rank-one step (``task_step``)."""
        self.thaw()
        if kind == INSERT:
            if self.size == self.h.shape[0]:
                self.reserve(self.size + 1)
            self.pos[s] = self.size
        self.size, gamma, mu, u = task_step(
            self.R, self.h, self.y, self.w, self.size, kind, p, s, krow, Kt, one_minus_alpha, y, w, lam, A, b, Phi
        )
        return u, gamma, mu

    def drop(self, p):
        """Remove position ``p`` (after a REMOVE step zeroed it), keeping the order of the others."""
        self.thaw()
        ell = self.size
        keep = np.r_[0:p, p + 1 : ell]
        del self.pos[int(self.h[p])]
        self.h[: ell - 1] = self.h[keep]
        self.y[: ell - 1] = self.y[keep]
        self.w[: ell - 1] = self.w[keep]
        self.R[: ell - 1, : ell - 1] = self.R[np.ix_(keep, keep)]
        self.R[ell - 1, :ell] = 0.0
        self.R[:ell, ell - 1] = 0.0
        self.size = ell - 1
        for q in range(p, ell - 1):
            self.pos[int(self.h[q])] = q

    def resolve(self, ktilde_block, lam):
        """Rebuild ``R`` from scratch (§3.7-3): ``((1−α)K̃ + λW)^{-1}`` by Cholesky."""
        self.thaw()
        ell = self.size
        M = ktilde_block + np.diag(lam * self.w[:ell])
        R = cho_solve(cho_factor(M, lower=True), np.eye(ell))
        self.R[:ell, :ell] = 0.5 * (R + R.T)


class OnlineMultiTaskLearner:
    """Exact incremental multi-task kernel regression between phones and a server (spec §3).

    Each task (user) ``j`` predicts ``g_j(x) = ḡ(x) + g̃_j(x)``: ``ḡ`` is shared by all tasks
    (weight ``alpha``), ``g̃_j`` is personal.  After any sequence of :meth:`update` and
    :meth:`delete` calls the state is the exact solution of ``(K + λW) c = y`` over all
    received triples (spec §3.2), obtained in O(ℓ_j²) per triple (see the module docstring).

    Parameters
    ----------
    alpha : float in [0, 1]
        Weight of the shared component (1 = pooled, 0 = independent tasks).
    lam : float > 0
        Regularisation λ (the noise variance of an observation with weight 1).
    task_kernel : dict or kernel object
        ``K̃``, the same for every task, e.g. ``{"name": "rbf", "gamma": 0.1}``.
    shared_kernel : dict or kernel object, optional
        ``K̄`` for *exact mode* (spec §3.4): must be strictly positive definite on the
        distinct inputs seen (the Case-3 pivot guard raises otherwise).
    feature_map : dict or feature-map object, optional
        ``φ`` for *feature-map mode* (spec §3.7-1): ``K̄(x, x') = φ(x)·φ(x')``; shared state is
        r×r whatever the number of inputs.  Give exactly one of ``shared_kernel`` and
        ``feature_map``.
    pivot_tol : float, default=1e-12
        Case-3 guard: a new input whose LDLᵀ pivot β is ≤ ``pivot_tol · K̄(x, x)`` is rejected.

    Attributes
    ----------
    n_inputs : int
        Distinct inputs seen (ids 0 … n_inputs − 1, in arrival order).
    n_updates : int
        Number of :meth:`update` and :meth:`delete` calls applied (carried by snapshots).
    tasks : list
        Task ids in order of first appearance.

    Examples
    --------
    >>> import numpy as np
    >>> learner = OnlineMultiTaskLearner(
    ...     alpha=0.5, lam=0.1, task_kernel={"name": "linear"},
    ...     shared_kernel={"name": "rbf", "gamma": 1.0})
    >>> key = learner.update("ann", [0.0, 1.0], 1.0)
    >>> key = learner.update("bob", [1.0, 0.0], -1.0)
    >>> learner.predict("ann", [[0.0, 1.0]]).round(3).tolist()
    [0.903]
    >>> learner.delete("bob", key)
    >>> learner.n_updates
    3
    """

    def __init__(self, alpha, lam, task_kernel, shared_kernel=None, feature_map=None, pivot_tol=1e-12):
        if not (isinstance(alpha, Real) and 0.0 <= alpha <= 1.0):
            raise ValueError(f"alpha must be a number in [0, 1], got {alpha!r}")
        if not (isinstance(lam, Real) and lam > 0 and np.isfinite(lam)):
            raise ValueError(f"lam must be a finite number > 0, got {lam!r}")
        if (shared_kernel is None) == (feature_map is None):
            raise ValueError("give exactly one of shared_kernel (exact mode) and feature_map (feature-map mode)")
        self.alpha = float(alpha)
        self.lam = float(lam)
        self.pivot_tol = float(pivot_tol)
        self.task_kernel = kernel_from_spec(task_kernel)
        self.shared_kernel = None if shared_kernel is None else kernel_from_spec(shared_kernel)
        self.feature_map = None if feature_map is None else feature_map_from_spec(feature_map)
        self._reset()

    # ------------------------------------------------------------------ state
    def _reset(self):
        self._dim = getattr(self.feature_map, "n_features_in", None)
        self._X = np.zeros((0, self._dim or 0))
        self._index = {}  # input bytes -> id
        self.n_inputs = 0
        self._tasks = {}
        self.n_updates = 0
        self._derived = None
        self._next = None  # feature-map mode: [X, Phi, rows copied] twice as large, filled ahead (_fill_ahead)
        if self.feature_map is None:
            self._L = np.zeros((0, 0))
            self._D = np.zeros(0)
            self._Kt = np.zeros((0, 0))  # raw K̃ Gram on X̌: Case-2 rows are a gather
            self._A = np.zeros((0, 0))
            self._b = np.zeros(0)
        else:
            r = self.feature_map.n_components
            self._Phi = np.zeros((0, r))
            self._A = np.zeros((r, r))
            self._b = np.zeros(r)

    @property
    def feature_mode(self):
        """True in feature-map mode (spec §3.7-1), False in exact mode (spec §3.4)."""
        return self.feature_map is not None

    @property
    def tasks(self):
        return list(self._tasks)

    def params(self):
        """The public parameters (spec §3.5) as a JSON-serialisable dict."""
        return {
            "alpha": self.alpha,
            "lam": self.lam,
            "pivot_tol": self.pivot_tol,
            "task_kernel": self.task_kernel.spec,
            "shared_kernel": None if self.shared_kernel is None else self.shared_kernel.spec,
            "feature_map": None if self.feature_map is None else self.feature_map.spec,
        }

    def input(self, key):
        """The input vector with id ``key``."""
        if not 0 <= key < self.n_inputs:
            raise UnknownEntryError(f"no input with key {key} (have 0..{self.n_inputs - 1})")
        return self._X[key].copy()

    def entries(self, task):
        """Task ``task``'s merged entries as arrays ``(keys, y, w)`` (spec §3.4 ``h^j, y^j, w^j``)."""
        st = self._tasks.get(check_task_id(task))
        if st is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
        ell = st.size
        return st.h[:ell].copy(), st.y[:ell].copy(), st.w[:ell].copy()

    # ----------------------------------------------------------------- update
    def _check_x(self, x):
        """Shape check only: finiteness is checked in :meth:`_register`, once per distinct input."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.ndim != 1:
            raise ValueError(f"x must be one input vector (1-d), got shape {x.shape}")
        if self._dim is None:  # exact mode: the first input fixes the dimension
            self._dim = x.shape[0]
            self._X = np.zeros((0, self._dim))
        if x.shape[0] != self._dim:
            raise ValueError(f"x has {x.shape[0]} features; this learner takes {self._dim}")
        return x

    def _register(self, x):
        """Id of ``x`` in X̌, appending it (Case-3 prefix of Alg. 5 / Alg. 8) if new."""
        key = x.tobytes()
        s = self._index.get(key)
        if s is not None:
            return s
        if not np.all(np.isfinite(x)):
            raise ValueError("x contains NaN or infinity; clean or drop the sample first")
        n = self.n_inputs
        if n == self._X.shape[0]:
            if self._next is not None and self._next[2] == n:  # feature-map mode: filled ahead
                self._X, self._Phi, self._next = self._next[0], self._next[1], None
            else:
                cap = max(8, 2 * n)
                self._X = _grow(self._X, cap, False)
                if self.feature_mode:
                    self._Phi = _grow(self._Phi, cap, False)
                    self._next = None
                else:
                    self._L, self._Kt, self._A = (_grow(a, cap, True) for a in (self._L, self._Kt, self._A))
                    self._D, self._b = _grow(self._D, cap, False), _grow(self._b, cap, False)
        if self.feature_mode:
            self._Phi[n] = self.feature_map(x)[0]
        else:
            self._border(x, n)
        self._X[n] = x
        self._index[key] = n
        self.n_inputs = n + 1
        if self.feature_mode:
            self._fill_ahead()
        return n

    def _fill_ahead(self, rows_per_input=4):
        """Feature-map mode: from half capacity on, copy a few rows per new input into buffers
        twice as large, so that when the buffers are full the larger ones are ready.

        Why: growing by one copy of ``X`` and ``Phi`` costs time proportional to the inputs held
        (0.12 s at 16,384 inputs, 0.18 s at 32,768 on the benchmark machine), all inside one
        update -- on the server's commit path, a stall every doubling.  Rows below
        ``n_inputs`` never change (inputs only append), so copying them early is exact, and the
        old buffers stay valid for a ``FrozenState`` that holds them.  Starting at half
        capacity and copying 4 rows per new input, the copy catches up long before the buffers
        are full.
        """
        n, cap = self.n_inputs, self._X.shape[0]
        if self._next is None:
            if 2 * n < cap or cap < 1024:  # small arrays: the one copy is cheap
                return
            self._next = [np.zeros((2 * cap, self._X.shape[1])), np.zeros((2 * cap, self._Phi.shape[1])), 0]
        X2, Phi2, done = self._next
        stop = min(n, done + rows_per_input)
        X2[done:stop] = self._X[done:stop]
        Phi2[done:stop] = self._Phi[done:stop]
        self._next[2] = stop

    def _border(self, x, n):
        """Case 3: border the LDLᵀ factor of Ǩ and the task-kernel Gram with input ``x``."""
        kbar = self.shared_kernel(x, self._X[:n])[0]
        ldl_border(self._L, self._D, n, kbar, float(self.shared_kernel(x, x)[0, 0]), self.pivot_tol)
        kt = self.task_kernel(x, np.vstack([self._X[:n], x[None, :]]))[0]
        self._Kt[n, : n + 1] = kt
        self._Kt[: n + 1, n] = kt

    def _step(self, st, kind, p, s, y=0.0, w=1.0):
        """Run the compiled task step with this learner's shared statistics."""
        krow = _EMPTY
        if kind == INSERT and self.feature_mode:
            # (1−α) K̃(x_s, [x_{h_1} … x_{h_ℓ}, x_s]); exact mode gathers it from the Gram instead.
            ids = np.append(st.h[: st.size], s)
            krow = (1.0 - self.alpha) * self.task_kernel(self._X[s], self._X[ids])[0]
        Kt, Phi = (_EMPTY2, self._Phi) if self.feature_mode else (self._Kt, _EMPTY2)
        _, gamma, mu = st.step(kind, p, s, krow, Kt, 1.0 - self.alpha, y, w, self.lam, self._A, self._b, Phi)
        self.n_updates += 1
        self._derived = None
        if not (math.isfinite(gamma) and math.isfinite(mu)):
            # A kernel value that overflowed (e.g. exp_dot on large inputs) gives NaN here without
            # raising, and would spread through A and b to every task's predictions.
            raise FloatingPointError(
                f"the update step is not finite (gamma={gamma!r}, mu={mu!r}), e.g. a kernel value overflowed; "
                "the learner's state is now invalid: rebuild it from the update log")

    def update(self, task, x, y, w=1.0):
        """Add the triple ``(x, y, w)`` of ``task`` exactly (spec §3.4 Alg. 5, Cases 1–3).

        Parameters
        ----------
        task : int or str
            Task (user) id; a new id starts a new task.
        x : array-like of shape (n_features,)
            Input.  Inputs equal byte for byte (as float64) are the same input.
        y : float
            Output.
        w : float > 0, default=1.0
            Noise-variance scale of this observation (larger = trusted less).  Repeats of
            ``(task, x)`` merge as ``1/w = Σ 1/w_i`` (spec §3.3).

        Returns
        -------
        key : int
            Id of ``x`` among the distinct inputs (stable; pass it to :meth:`delete`).

        Raises
        ------
        FloatingPointError
            If the step is not finite (a kernel value overflowed).  The state is then invalid
            and must be rebuilt from the update log (the server does).
        """
        task = check_task_id(task)
        x = self._check_x(x)
        y, w = _finite("y", y), _finite("w", w)
        if not w > 0:
            raise ValueError(f"w must be a finite number > 0, got {w!r}")
        s = self._register(x)
        st = self._tasks.get(task)
        if st is None:
            st = self._tasks[task] = _Task()
        p = st.pos.get(s)
        if p is None:
            self._step(st, INSERT, 0, s, y, w)
        else:
            self._step(st, REPEAT, p, s, y, w)
        return s

    def update_many(self, tasks, X, y, w=None):
        """:meth:`update` for each row in order (same result bit for bit); returns the keys."""
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        w = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
        if not (X.ndim == 2 and len(tasks) == X.shape[0] == y.shape[0] == w.shape[0]):
            raise ValueError(
                f"update_many needs tasks, X (2-d), y and w of one length; got {len(tasks)}, "
                f"{X.shape}, {y.shape}, {w.shape}"
            )
        return np.array([self.update(t, X[i], float(y[i]), float(w[i])) for i, t in enumerate(tasks)], dtype=np.int64)

    def delete(self, task, key):
        """Remove task ``task``'s (merged) entry at input ``key`` exactly (spec §3.7-2).

        The result equals never having sent that input from that task (all its repeats).
        Raises :class:`UnknownEntryError` if the task does not hold ``key``.
        """
        task = check_task_id(task)
        st = self._tasks.get(task)
        p = None if st is None else st.pos.get(int(key))
        if p is None:
            raise UnknownEntryError(f"task {task!r} has no entry with key {key!r}")
        self._step(st, REMOVE, p, int(key))
        st.drop(p)
        if st.size == 0:
            del self._tasks[task]

    # ---------------------------------------------------------- derived state
    def _solve(self):
        """z, the shared coordinates ḡ(x̌)/α (or Φz) and č, cached until the next change."""
        if self._derived is not None:
            return self._derived
        a = self.alpha
        if self.feature_mode:
            r = self._A.shape[0]
            A = 0.5 * (self._A + self._A.T)
            factor = cho_factor(np.eye(r) + a * A, lower=True)
            z = cho_solve(factor, self._b)
            coords = self._Phi[: self.n_inputs] @ z
            self._derived = {"factor": factor, "z": z, "coords": coords}
        else:
            n = self.n_inputs
            L, sd = self._L[:n, :n], np.sqrt(self._D[:n])
            A, b = 0.5 * (self._A[:n, :n] + self._A[:n, :n].T), self._b[:n]
            M = L * sd
            S = a * (M.T @ A @ M)
            factor = cho_factor(np.eye(n) + 0.5 * (S + S.T), lower=True)
            y_check = L.T @ b
            z = sd * cho_solve(factor, sd * y_check)
            coords = L @ z  # = Ǩ č, i.e. ḡ(x̌_i)/α
            cbar = b - a * (A @ coords)  # = Pᵀ c (spec §3.3), no division by D
            self._derived = {"factor": factor, "sd": sd, "y_check": y_check, "z": z, "coords": coords, "cbar": cbar}
        return self._derived

    def published(self):
        """The disclosed state of spec §3.4/§3.5: ``{"X": X̌, "y_check": y̌, "H": H}``.

        Feature-map mode publishes ``X`` as an empty (0, d) array: clients need only φ, H, y̌.
        H is symmetrised.  Cost O(n³) (or O(r³)); cached until the next update.
        """
        d = self._solve()
        n = self.n_inputs
        if self.feature_mode:
            H = cho_solve(d["factor"], np.eye(self._A.shape[0]))
            return {"X": np.zeros((0, self._X.shape[1])), "y_check": self._b.copy(), "H": 0.5 * (H + H.T)}
        sd = d["sd"]
        H = sd[:, None] * cho_solve(d["factor"], np.eye(n)) * sd[None, :]
        return {"X": self._X[:n].copy(), "y_check": d["y_check"].copy(), "H": 0.5 * (H + H.T)}

    def coefficients(self, task):
        """``c^j = R^j (y^j − α Z_j L z)`` of Alg. 4 line 7 / Alg. 9 (empty for an unknown task)."""
        st = self._tasks.get(check_task_id(task))
        if st is None:
            return np.zeros(0)
        ell = st.size
        coords = self._solve()["coords"][st.h[:ell]]
        return st.R[:ell, :ell] @ (st.y[:ell] - self.alpha * coords)

    def shared_predict(self, X):
        """``ḡ(x)``, the shared component (the prediction for a user without data)."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        d = self._solve()
        if self.n_inputs == 0 or self.alpha == 0.0:
            return np.zeros(X.shape[0])
        if self.feature_mode:
            return self.alpha * (self.feature_map(X) @ d["z"])
        return self.alpha * (self.shared_kernel(X, self._X[: self.n_inputs]) @ d["cbar"])

    def predict(self, task, X):
        """``g_j(x) = ḡ(x) + g̃_j(x)`` for every row of ``X`` (spec §3.3 prediction formula)."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        out = self.shared_predict(X)
        st = self._tasks.get(check_task_id(task))
        if st is not None and self.alpha < 1.0:
            c = self.coefficients(task)
            out = out + (1.0 - self.alpha) * (self.task_kernel(X, self._X[st.h[: st.size]]) @ c)
        return out

    # ---------------------------------------------------------------- rebuild
    def rebuild(self):
        """Recompute every factor and statistic from the stored triples (spec §3.7-3, Alg. 4).

        Stops the drift of long chains of rank-one updates; the result equals the incremental
        state up to rounding.  Input ids, task order and entries are unchanged.
        """
        n = self.n_inputs
        X = self._X[:n]
        # Fresh buffers: a FrozenState may hold the old prefixes, which must not change under it.
        if self.feature_mode:
            self._Phi = self._Phi.copy()
            self._next = None  # its copied rows would be the old Phi
        else:
            self._L, self._D, self._Kt = self._L.copy(), self._D.copy(), self._Kt.copy()
        if self.feature_mode:
            self._Phi[:n] = self.feature_map(X) if n else self._Phi[:0]
            self._A[:] = 0.0
            self._b[:] = 0.0
        else:
            G = self.shared_kernel(X, X)
            C = np.linalg.cholesky(0.5 * (G + G.T))
            diag = np.diag(C)
            self._L[:n, :n] = C / diag
            self._D[:n] = diag * diag
            self._Kt[:n, :n] = self.task_kernel(X, X)
            self._A[:n, :n] = 0.0
            self._b[:n] = 0.0
        for st in self._tasks.values():
            ids = st.h[: st.size]
            kt = self.task_kernel(self._X[ids], self._X[ids]) if self.feature_mode else self._Kt[np.ix_(ids, ids)]
            st.resolve((1.0 - self.alpha) * kt, self.lam)
            R, t = st.R[: st.size, : st.size], st.R[: st.size, : st.size] @ st.y[: st.size]
            if self.feature_mode:
                Phi = self._Phi[ids]
                self._A += Phi.T @ R @ Phi
                self._b += Phi.T @ t
            else:
                self._A[np.ix_(ids, ids)] += R
                self._b[ids] += t
        if self.feature_mode:
            self._A[:] = 0.5 * (self._A + self._A.T)
        self._derived = None

    # --------------------------------------------------------------- snapshot
    def freeze(self):
        """The state now, as a :class:`FrozenState`, in O(number of tasks) time.

        Copy-on-write: the frozen state holds the learner's own arrays; what only grows (inputs,
        feature rows, the LDLᵀ factor) is never written below the frozen length, ``A`` and ``b``
        are copied (r×r in feature-map mode), and each task copies its arrays before its next
        change (``_Task.thaw``).  So the frozen state can be serialised later, from another
        thread, while this learner goes on updating (the server's background checkpoint).
        """
        return FrozenState(self)

    def snapshot(self):
        """Full server state as ``(arrays, meta)``: numpy arrays + a JSON-serialisable dict.

        No pickle: store each array e.g. with ``np.save(..., allow_pickle=False)`` and ``meta``
        with ``json.dumps``.  :meth:`from_snapshot` restores a learner whose future behaviour is
        bit-identical to this one's.  Per-task arrays are concatenated in task order
        (``task_sizes`` gives the lengths; ``task_R`` holds each ``R^j`` row-major).
        """
        return self.freeze().snapshot()

    @classmethod
    def from_snapshot(cls, arrays, meta):
        """Rebuild a learner from :meth:`snapshot` output (arrays may come back as any ndarray)."""
        if meta.get("format") != SNAPSHOT_FORMAT:
            raise ValueError(f"snapshot format {meta.get('format')!r} is not {SNAPSHOT_FORMAT!r}")
        self = cls(
            meta["alpha"], meta["lam"], meta["task_kernel"], shared_kernel=meta["shared_kernel"],
            feature_map=meta["feature_map"], pivot_tol=meta["pivot_tol"],
        )
        a = {k: np.asarray(v) for k, v in arrays.items()}
        n = a["X"].shape[0]
        self._dim = meta["n_features_in"]
        self.n_inputs = n
        if self._dim is not None:  # None: an exact-mode learner that never saw an input
            self._X = a["X"].astype(np.float64).reshape(n, self._dim)
        self._index = {self._X[i].tobytes(): i for i in range(n)}
        if self.feature_mode:
            self._Phi = a["Phi"].astype(np.float64).reshape(n, self.feature_map.n_components).copy()
            self._A, self._b = a["A"].astype(np.float64).copy(), a["b"].astype(np.float64).copy()
        else:
            self._L, self._D, self._Kt = (a[k].astype(np.float64).copy() for k in ("L", "D", "Kt"))
            self._A, self._b = a["A"].astype(np.float64).copy(), a["b"].astype(np.float64).copy()
            self._L, self._Kt, self._A = (x.reshape(n, n) for x in (self._L, self._Kt, self._A))
        off, roff = 0, 0
        for task, size in zip(meta["tasks"], a["task_sizes"].tolist()):
            st = _Task(max(size, 1))
            st.h[:size] = a["task_h"][off : off + size]
            st.y[:size] = a["task_y"][off : off + size]
            st.w[:size] = a["task_w"][off : off + size]
            st.R[:size, :size] = a["task_R"][roff : roff + size * size].reshape(size, size)
            st.size = size
            st.pos = {int(s): q for q, s in enumerate(st.h[:size])}
            self._tasks[check_task_id(task)] = st
            off, roff = off + size, roff + size * size
        self.n_updates = int(meta["n_updates"])
        return self


class FrozenState:
    """An :class:`OnlineMultiTaskLearner`'s state at one moment, by reference (see
    :meth:`OnlineMultiTaskLearner.freeze`).  Read-only.

    Attributes
    ----------
    n_inputs : int
        Distinct inputs at the moment of freezing.
    inputs : dict of str to ndarray
        The append-only arrays, rows ``0 … n_inputs − 1``: ``X`` (and ``Phi`` in feature-map mode;
        ``L``, ``D``, ``Kt`` in exact mode).
    dense : dict of str to ndarray
        ``A`` and ``b`` (copies).
    tasks : list of tuple
        ``(task, h, y, w, R, size)`` per task in task order: the task's buffers, of which the first
        ``size`` entries (``R[:size, :size]``) are live.  A task that did not change between two
        freezes has the *same* buffer objects in both (``is``): an incremental checkpoint writes
        only the tasks whose buffers differ.
    meta : dict
        JSON-serialisable parameters and counters (as in :meth:`OnlineMultiTaskLearner.snapshot`).
    """

    def __init__(self, learner):
        n = learner.n_inputs
        self.n_inputs = n
        self.inputs = {"X": learner._X[:n]}
        if learner.feature_mode:
            self.inputs["Phi"] = learner._Phi[:n]
            self.dense = {"A": learner._A.copy(), "b": learner._b.copy()}
        else:
            self.inputs.update(L=learner._L[:n, :n], D=learner._D[:n], Kt=learner._Kt[:n, :n])
            self.dense = {"A": learner._A[:n, :n].copy(), "b": learner._b[:n].copy()}
        self.tasks = []
        for task, st in learner._tasks.items():  # no slicing here: this runs on the caller's hot path
            st.frozen = True
            self.tasks.append((task, st.h, st.y, st.w, st.R, st.size))
        self.meta = {
            "format": SNAPSHOT_FORMAT,
            **learner.params(),
            "n_features_in": learner._dim,
            "n_updates": learner.n_updates,
            "tasks": [t[0] for t in self.tasks],
        }
        json.dumps(self.meta)  # fail here, not in the caller's database, if something is not JSON

    def snapshot(self):
        """``(arrays, meta)`` exactly as :meth:`OnlineMultiTaskLearner.snapshot` at freezing time."""
        sts = [(t[0], *FrozenState.live(t)) for t in self.tasks]
        arrays = {k: v.copy() for k, v in {**self.inputs, **self.dense}.items()}
        arrays.update(
            task_sizes=np.array([len(t[1]) for t in sts], dtype=np.int64),
            task_h=np.concatenate([t[1] for t in sts]) if sts else np.zeros(0, np.int64),
            task_y=np.concatenate([t[2] for t in sts]) if sts else np.zeros(0),
            task_w=np.concatenate([t[3] for t in sts]) if sts else np.zeros(0),
            task_R=np.concatenate([t[4].ravel() for t in sts]) if sts else np.zeros(0),
        )
        return arrays, dict(self.meta)

    @staticmethod
    def live(entry):
        """``(h, y, w, R)`` of one :attr:`tasks` entry, cut to the task's size (views)."""
        _, h, y, w, R, ell = entry
        return h[:ell], y[:ell], w[:ell], R[:ell, :ell]
