"""The compiled per-triple step's shared rank-one update (``models/multitask/_online_compiled.py``).

Oracle: numpy's ``A + γ · (v vᵀ)`` elementwise -- the same floats the step must add, whatever
order it visits the entries in -- and exact symmetry of ``A`` and ``R`` (``γ (v_c v_d)`` is one
float for (c, d) and (d, c)).  The learner's results against a dense solve are in test_online_mtl.py.
"""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from stairsense.models.multitask._online_compiled import INSERT, REMOVE, task_step


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), ell=st.integers(0, 6), r=st.integers(1, 40))
def test_the_shared_rank_one_step_adds_gamma_v_vT_exactly_and_stays_symmetric(seed, ell, r):
    rng = np.random.default_rng(seed)
    n = ell + 1
    Phi = rng.normal(size=(n, r))
    M = rng.normal(size=(ell, ell))
    R = np.zeros((n + 1, n + 1))
    R[:ell, :ell] = np.linalg.inv(M @ M.T + ell * np.eye(ell)) if ell else 0.0
    R[:ell, :ell] = 0.5 * (R[:ell, :ell] + R[:ell, :ell].T)
    h, yv, wv = np.zeros(n + 1, np.int64), np.zeros(n + 1), np.ones(n + 1)
    h[:ell], yv[:ell] = np.arange(ell), rng.normal(size=ell)
    A0 = rng.normal(size=(r, r))
    A0 = A0 + A0.T
    A, b = A0.copy(), np.zeros(r)
    krow = np.abs(rng.normal(size=ell + 1)) + 1.0
    size, gamma, mu, u = task_step(R, h, yv, wv, ell, INSERT, 0, ell, krow, np.zeros((0, 0)), 0.5, 0.3, 1.0, 0.1,
                                   A, b, Phi)
    v = np.zeros(r)
    for i in range(size):  # ũ = Φ_jᵀ u, accumulated in the step's order
        v += Phi[h[i]] * u[i]
    np.testing.assert_array_equal(A, A0 + gamma * np.multiply.outer(v, v))
    np.testing.assert_array_equal(A, A.T)
    np.testing.assert_array_equal(R[:size, :size], R[:size, :size].T)
    task_step(R, h, yv, wv, size, REMOVE, 0, 0, np.zeros(0), np.zeros((0, 0)), 0.5, 0.0, 1.0, 0.1, A, b, Phi)
    np.testing.assert_array_equal(A, A.T)
    np.testing.assert_array_equal(R[:size, :size], R[:size, :size].T)


def test_inputs_and_feature_rows_survive_growth_filled_ahead():
    """Feature-map mode grows X and Phi by filling larger buffers ahead (``_fill_ahead``): after
    several doublings every row is still the input given and its feature row, bit for bit, and a
    state frozen before a doubling is unchanged by it."""
    from stairsense.models.multitask import OnlineMultiTaskLearner

    rng = np.random.default_rng(0)
    learner = OnlineMultiTaskLearner(alpha=0.5, lam=1.0, task_kernel={"name": "rbf", "gamma": 0.1},
                                     feature_map={"name": "rff", "n_features_in": 5, "n_components": 16,
                                                  "gamma": 0.1, "seed": 0})
    X = rng.normal(size=(5000, 5))
    frozen = []
    for i, x in enumerate(X):  # capacities 1024 -> 2048 -> 4096 -> 8192, filled ahead from half
        learner.update(i % 7, x, float(i % 3))
        if i in (1500, 3000):
            frozen.append((i + 1, learner.freeze(), learner.snapshot()))
    arrays, _ = learner.snapshot()
    np.testing.assert_array_equal(arrays["X"], X)
    np.testing.assert_array_equal(arrays["Phi"], np.vstack([learner.feature_map(x)[0] for x in X]))
    for n, state, then in frozen:
        got = state.snapshot()[0]
        np.testing.assert_array_equal(got["X"], X[:n])
        for name in then[0]:
            np.testing.assert_array_equal(got[name], then[0][name], err_msg=name)
