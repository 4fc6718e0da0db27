"""Client side of the online multi-task learner (spec §3.5, thesis Alg. 9).

A phone holds its own triples; from a downloaded snapshot ``{"X": X̌, "y_check": y̌, "H": H}``
(see ``OnlineMultiTaskLearner.published``) and the public parameters it computes its own
model ``g_j = ḡ + g̃_j`` locally:

* an **active** client has uploaded its triples, so they are already inside (X̌, y̌, H); it
  only mirrors the task part of Alg. 5 on its own data to get ``R^j`` (spec §3.5, gap 1:
  the server never sends ``R^j``);
* a **passive** client uploads nothing: it replays Alg. 5 on local copies of the snapshot for
  its own triples (Case 3 bordering, the task part, and the Sherman–Morrison step
  ``H ← H − qqᵀ/(1/(αγ) + vᵀq)`` of Alg. 5 with errata E6/E7), discarding the copies at the
  next download so that nothing is counted twice (spec §3.5, "passive client refresh").

Then Alg. 9 lines 3–6: ``z = H y̌``, ``č`` from ``D Lᵀ č = z`` (back substitution),
``c^j = R^j (y^j − α L(h^j,:) z)``.  Feature-map mode (§3.7-1) needs no X̌ and no č:
``ḡ(x) = α φ(x)·z``.  The LDLᵀ factor of Ǩ is cached and only extended when a new download
appends inputs (spec §3.5, "client L, D caching").
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

from ._feature_maps import feature_map_from_spec, kernel_from_spec
from ._online import _EMPTY, _EMPTY2, _Task, _finite, ldl_border
from ._online_compiled import INSERT, REPEAT

__all__ = ["OnlineMultiTaskClient"]


class OnlineMultiTaskClient:
    """One user's side of spec §3.5: private triples, local model from a downloaded snapshot.

    Parameters
    ----------
    params : dict
        The public parameters, ``OnlineMultiTaskLearner.params()`` of the server.
    passive : bool, default=True
        Passive clients never upload and replay their triples locally (Alg. 9 line 2);
        active clients' triples must already be inside every snapshot they download.

    Examples
    --------
    >>> import numpy as np
    >>> from stairsense.models.multitask import OnlineMultiTaskLearner
    >>> server = OnlineMultiTaskLearner(0.5, 0.1, {"name": "linear"}, shared_kernel={"name": "rbf"})
    >>> _ = server.update("ann", [0.0, 1.0], 1.0)
    >>> me = OnlineMultiTaskClient(server.params(), passive=True)
    >>> me.add([1.0, 0.0], -1.0)
    >>> me.download(server.published())
    >>> server.update("me", [1.0, 0.0], -1.0) == 1  # what an active upload would have given
    True
    >>> bool(np.allclose(me.predict([[0.5, 0.5]]), server.predict("me", [[0.5, 0.5]])))
    True
    """

    def __init__(self, params, passive=True):
        self.params = dict(params)
        self.passive = bool(passive)
        self.alpha = float(params["alpha"])
        self.lam = float(params["lam"])
        self.task_kernel = kernel_from_spec(params["task_kernel"])
        fm = params.get("feature_map")
        self.feature_map = None if fm is None else feature_map_from_spec(fm)
        self.shared_kernel = None if params.get("shared_kernel") is None else kernel_from_spec(params["shared_kernel"])
        self.pivot_tol = float(params.get("pivot_tol", 1e-12))
        self.triples = []  # own (x, y, w), never sent by a passive client
        self._cache_X = None  # X̌ the cached L, D factor
        self._L = np.zeros((0, 0))
        self._D = np.zeros(0)
        self._model = None

    def add(self, x, y, w=1.0):
        """Record one own triple (takes effect at the next :meth:`download`)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.ndim != 1 or not np.all(np.isfinite(x)):
            raise ValueError(f"x must be a finite 1-d input vector, got shape {x.shape}")
        w = _finite("w", w)
        if not w > 0:
            raise ValueError(f"w must be a finite number > 0, got {w!r}")
        self.triples.append((x, _finite("y", y), w))

    # ------------------------------------------------------------ the factor
    def _factor(self, X):
        """L, D of Ǩ = K̄(X̌, X̌), extending the cached factor when X̌ only grew (spec §3.5)."""
        n0 = 0
        if self._cache_X is not None and len(self._cache_X) <= len(X) and np.array_equal(self._cache_X, X[: len(self._cache_X)]):
            n0 = len(self._cache_X)
        n = len(X)
        L, D = np.zeros((n, n)), np.zeros(n)
        L[:n0, :n0], D[:n0] = self._L[:n0, :n0], self._D[:n0]
        for i in range(n0, n):
            ldl_border(L, D, i, self.shared_kernel(X[i], X[:i])[0], float(self.shared_kernel(X[i], X[i])[0, 0]), self.pivot_tol)
        self._cache_X, self._L, self._D = X.copy(), L, D
        return L.copy(), D.copy()

    # -------------------------------------------------------------- download
    def download(self, published):
        """Recompute the local model from a snapshot ``{"X", "y_check", "H"}`` (Alg. 9)."""
        H = np.array(published["H"], dtype=np.float64)
        y_check = np.array(published["y_check"], dtype=np.float64)
        if H.ndim != 2 or H.shape[0] != H.shape[1] or y_check.shape != (H.shape[0],):
            raise ValueError(f"snapshot H must be square and y_check match it; got {H.shape} and {y_check.shape}")
        feature = self.feature_map is not None
        if feature:
            X = np.zeros((0, 0))
            own_X = []
        else:
            X = np.array(published["X"], dtype=np.float64)
            if len(H) == 0:  # nothing published yet: X̌ is empty, of the own inputs' width
                X = np.zeros((0, len(self.triples[0][0]) if self.triples else 0))
            X = X.reshape(len(H), -1)
            L, D = self._factor(X)
            index = {X[i].tobytes(): i for i in range(len(X))}
        task = _Task()
        a = self.alpha
        for x, y, w in self.triples:
            if feature:
                key = next((i for i, z in enumerate(own_X) if np.array_equal(z, x)), None)
                if key is None:
                    key = len(own_X)
                    own_X.append(x)
            else:
                key = index.get(x.tobytes())
                if key is None:
                    if not self.passive:
                        raise ValueError(
                            "an own triple's input is not in the downloaded snapshot: an active client "
                            "must download a snapshot published after its upload"
                        )
                    key = len(X)
                    L, D, H, y_check = self._local_case3(X, L, D, H, y_check, x)
                    X = np.vstack([X, x[None, :]])
                    index[x.tobytes()] = key
            p = task.pos.get(key)
            kind = INSERT if p is None else REPEAT
            krow = _EMPTY
            if kind == INSERT:
                own = [own_X[k] for k in task.h[: task.size]] if feature else [X[k] for k in task.h[: task.size]]
                krow = (1.0 - a) * self.task_kernel(x, np.array(own + [x]))[0]
            u, gamma, mu = task.step(kind, p or 0, key, krow, _EMPTY2, 1.0 - a, y, w, self.lam, _EMPTY2, _EMPTY, _EMPTY2)
            if self.passive and a > 0.0:
                Zj = self.feature_map(np.array([own_X[k] for k in task.h[: task.size]])) if feature else L[task.h[: task.size]]
                v = Zj.T @ u
                y_check = y_check + mu * v
                q = H @ v
                H = H - np.outer(q, q) / (1.0 / (a * gamma) + v @ q)  # Alg. 5 last line (E6)
                H = 0.5 * (H + H.T)  # §3.7-3
        z = H @ y_check
        ell = task.size
        if feature:
            Zj = self.feature_map(np.array(own_X)) if own_X else np.zeros((0, H.shape[0]))
            cbar = None
        else:
            Zj = L[task.h[:ell]]
            cbar = solve_triangular(D[:, None] * L.T, z, lower=False) if len(X) else np.zeros(0)
        c = task.R[:ell, :ell] @ (task.y[:ell] - a * (Zj @ z)) if ell else np.zeros(0)
        own_inputs = (np.array(own_X) if feature else X[task.h[:ell]]) if ell else None
        self._model = {"z": z, "cbar": cbar, "X": X, "c": c, "own_X": own_inputs}

    def _local_case3(self, X, L, D, H, y_check, x):
        """Case-3 prefix of Alg. 5 on the local copies: border L, D; ``H ← diag(H, β)``, ``y̌ ← [y̌; 0]``."""
        n = len(X)
        L2, D2 = np.zeros((n + 1, n + 1)), np.zeros(n + 1)
        L2[:n, :n], D2[:n] = L, D
        ldl_border(L2, D2, n, self.shared_kernel(x, X)[0], float(self.shared_kernel(x, x)[0, 0]), self.pivot_tol)
        H2 = np.zeros((n + 1, n + 1))
        H2[:n, :n] = H
        H2[n, n] = D2[n]
        return L2, D2, H2, np.append(y_check, 0.0)

    # --------------------------------------------------------------- predict
    def predict(self, X):
        """``g_j(x) = α Σ č_i K̄(x̌_i, x) + (1−α) Σ c^j_i K̃(x_{h_i}, x)`` (Alg. 9 line 6)."""
        if self._model is None:
            raise ValueError("call download(snapshot) before predict")
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        m, a = self._model, self.alpha
        if self.feature_map is not None:
            out = a * (self.feature_map(X) @ m["z"]) if a > 0 else np.zeros(len(X))
        else:
            out = a * (self.shared_kernel(X, m["X"]) @ m["cbar"]) if a > 0 and len(m["X"]) else np.zeros(len(X))
        if len(m["c"]) and a < 1.0:
            out = out + (1.0 - a) * (self.task_kernel(X, m["own_X"]) @ m["c"])
        return out
