"""Online multi-task learner (spec dinuzzo §3) against an independent dense solve.

Oracle: the minimiser of spec §3.2 over the raw (unmerged) triples, from one
``numpy.linalg.solve`` of ``(K + λW) c = y`` with the mixed-effect kernel built here from
the formulas, and the disclosed state ``H = (D⁻¹ + α Lᵀ Pᵀ R P L)⁻¹``, ``y̌ = Lᵀ Pᵀ R y``
(spec §3.3, A.4) from a dense LDLᵀ (numpy Cholesky) and dense inverses.
"""
import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stairsense.models.multitask import OnlineMultiTaskLearner, UnknownEntryError

ITEMS = np.random.default_rng(7).normal(size=(6, 3))
GAMMA_BAR, LAM = 0.4, 0.05
RFF = {"name": "rff", "n_features_in": 3, "n_components": 30, "gamma": 0.3, "seed": 5}


def rbf(X1, X2, gamma=GAMMA_BAR):
    return np.exp(-gamma * ((X1[:, None, :] - X2[None, :, :]) ** 2).sum(-1))


def task_kernel(X1, X2):
    return X1 @ X2.T + 1.0  # the "linear" kernel with offset 1


def rff(X):
    rng = np.random.default_rng(RFF["seed"])
    W = rng.normal(scale=np.sqrt(2 * RFF["gamma"]), size=(RFF["n_components"], 3))
    b = rng.uniform(0, 2 * np.pi, size=RFF["n_components"])
    return np.sqrt(2 / RFF["n_components"]) * np.cos(X @ W.T + b)


def make(alpha, mode):
    shared = {"shared_kernel": {"name": "rbf", "gamma": GAMMA_BAR}} if mode == "exact" else {"feature_map": RFF}
    return OnlineMultiTaskLearner(alpha, LAM, {"name": "linear", "offset": 1.0}, **shared)


def shared_kernel(mode):
    return rbf if mode == "exact" else (lambda A, B: rff(A) @ rff(B).T)


def dense_oracle(triples, alpha, kbar):
    """Predictor of the exact minimiser over the raw triples ``(task, x, y, w)``."""
    if not triples:
        return lambda task, Xq: np.zeros(len(Xq))
    T = np.array([t for t, _, _, _ in triples])
    X = np.array([x for _, x, _, _ in triples])
    y = np.array([v for _, _, v, _ in triples])
    w = np.array([v for _, _, _, v in triples])
    same = T[:, None] == T[None, :]
    K = alpha * kbar(X, X) + (1 - alpha) * same * task_kernel(X, X)
    c = np.linalg.solve(K + LAM * np.diag(w), y)
    return lambda task, Xq: (alpha * kbar(Xq, X) + (1 - alpha) * (T[None, :] == task) * task_kernel(Xq, X)) @ c


def dense_state(triples, alpha, Xcheck, mode):
    """(H, y̌) of spec §3.3/A.4 from dense algebra over the raw triples."""
    if mode == "exact":
        C = np.linalg.cholesky(rbf(Xcheck, Xcheck))
        Lfac, D = C / np.diag(C), np.diag(C) ** 2
        rows = [np.flatnonzero((Xcheck == x).all(1))[0] for _, x, _, _ in triples]
        PL = Lfac[rows]
    else:
        D = np.ones(RFF["n_components"])
        PL = rff(np.array([x for _, x, _, _ in triples])) if triples else np.zeros((0, len(D)))
    T = np.array([t for t, _, _, _ in triples])
    X = np.array([x for _, x, _, _ in triples]).reshape(len(triples), 3)
    y = np.array([v for _, _, v, _ in triples])
    w = np.array([v for _, _, _, v in triples])
    R = np.linalg.inv((1 - alpha) * (T[:, None] == T[None, :]) * task_kernel(X, X) + LAM * np.diag(w))
    H = np.linalg.inv(np.diag(1 / D) + alpha * PL.T @ R @ PL)
    return H, PL.T @ R @ y


# an operation: (task, item, y, w, delete?)
operations = st.lists(
    st.tuples(
        st.integers(0, 3),
        st.integers(0, 5),
        st.floats(-2, 2),
        st.floats(0.2, 3.0),
        st.booleans(),
    ),
    min_size=1,
    max_size=40,
)


def run(ops, learner):
    """Apply ``ops`` (a delete removes the task's entry at that item if present); return the raw triples kept."""
    triples = []
    for task, item, y, w, delete in ops:
        x = ITEMS[item]
        held = [tr for tr in triples if tr[0] == task and np.array_equal(tr[1], x)]
        if delete and held:
            key = next(k for k in learner.entries(task)[0] if np.array_equal(learner.input(k), x))
            learner.delete(task, key)
            triples = [tr for tr in triples if not (tr[0] == task and np.array_equal(tr[1], x))]
        else:
            learner.update(task, x, y, w)
            triples.append((task, x, y, w))
    return triples


QUERY = np.random.default_rng(11).normal(size=(4, 3))


@settings(max_examples=50, deadline=None)
@given(ops=operations, alpha=st.sampled_from([0.0, 0.35, 1.0]), mode=st.sampled_from(["exact", "feature"]))
def test_interleaved_updates_and_deletions_equal_dense_solve(ops, alpha, mode):
    learner = make(alpha, mode)
    triples = run(ops, learner)
    predict = dense_oracle(triples, alpha, shared_kernel(mode))
    Xq = np.vstack([ITEMS, QUERY])
    for task in range(5):  # task 4 never sends data: shared part only
        np.testing.assert_allclose(learner.predict(task, Xq), predict(task, Xq), rtol=0, atol=1e-9)
    if triples:
        pub = learner.published()
        H, y_check = dense_state(triples, alpha, pub["X"], mode)
        scale = max(1.0, np.abs(H).max())
        np.testing.assert_allclose(pub["H"], H, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(pub["y_check"], y_check, rtol=0, atol=1e-9 * max(1.0, np.abs(y_check).max()))
        assert np.array_equal(pub["H"], pub["H"].T)


@settings(max_examples=30, deadline=None)
@given(ops=operations, alpha=st.sampled_from([0.0, 0.6, 1.0]))
def test_feature_map_mode_equals_exact_mode_with_induced_kernel(ops, alpha):
    fmode = make(alpha, "feature")
    exact = OnlineMultiTaskLearner(
        alpha, LAM, {"name": "linear", "offset": 1.0}, shared_kernel={"name": "feature_map", "feature_map": RFF}
    )
    run(ops, fmode)
    run(ops, exact)
    for task in range(5):
        np.testing.assert_allclose(fmode.predict(task, QUERY), exact.predict(task, QUERY), rtol=0, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(ops=operations, mode=st.sampled_from(["exact", "feature"]), data=st.data())
def test_deletion_equals_never_having_added(ops, mode, data):
    """Insert (task, item) entries at a random point, delete them at the end: as if never sent."""
    task, item = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 5))
    kept = [op[:4] + (False,) for op in ops if not (op[0] == task and op[1] == item)]
    at = data.draw(st.integers(0, len(kept)))
    extra = [(task, item, 1.5, 0.7, False), (task, item, -0.5, 2.0, False)]
    with_extra, without = make(0.4, mode), make(0.4, mode)
    run(kept[:at] + extra + kept[at:], with_extra)
    run(kept, without)
    key = next(k for k in with_extra.entries(task)[0] if np.array_equal(with_extra.input(k), ITEMS[item]))
    with_extra.delete(task, key)
    for t in range(5):
        np.testing.assert_allclose(with_extra.predict(t, QUERY), without.predict(t, QUERY), rtol=0, atol=1e-9)


def test_repeats_merge_as_the_spec_says():
    """Case 1: two observations at one (task, x) merge to 1/w = Σ1/w_i, y = w Σ y_i/w_i (spec §3.3)."""
    learner = make(0.5, "exact")
    learner.update(0, ITEMS[0], 1.0, 0.5)
    learner.update(0, ITEMS[0], 3.0, 2.0)
    keys, y, w = learner.entries(0)
    assert keys.tolist() == [0]
    np.testing.assert_allclose(w, [1 / (1 / 0.5 + 1 / 2.0)], rtol=1e-15)
    np.testing.assert_allclose(y, [w[0] * (1.0 / 0.5 + 3.0 / 2.0)], rtol=1e-15)


@pytest.mark.parametrize("mode", ["exact", "feature"])
def test_rebuild_matches_incremental_state(mode):
    rng = np.random.default_rng(3)
    learner = make(0.3, mode)
    for _ in range(200):
        learner.update(int(rng.integers(8)), ITEMS[rng.integers(6)], float(rng.normal()), float(rng.uniform(0.5, 2)))
    before = learner.predict(2, QUERY), learner.published()
    learner.rebuild()
    after = learner.predict(2, QUERY), learner.published()
    np.testing.assert_allclose(after[0], before[0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(after[1]["H"], before[1]["H"], rtol=0, atol=1e-9 * np.abs(before[1]["H"]).max())


def _log(seed, n):
    rng = np.random.default_rng(seed)
    return [
        (["ann", "bob", 7][rng.integers(3)], ITEMS[rng.integers(6)], float(rng.normal()), float(rng.uniform(0.5, 2)))
        for _ in range(n)
    ]


def _roundtrip(arrays, meta):
    """What a server does with a snapshot: np.save each array (no pickle), json the meta."""
    loaded = {}
    for name, a in arrays.items():
        buf = io.BytesIO()
        np.save(buf, a, allow_pickle=False)
        buf.seek(0)
        loaded[name] = np.load(buf, allow_pickle=False)
    return loaded, json.loads(json.dumps(meta))


def _same_state(a, b):
    (arr_a, meta_a), (arr_b, meta_b) = a.snapshot(), b.snapshot()
    assert meta_a == meta_b
    assert arr_a.keys() == arr_b.keys()
    for name in arr_a:
        assert arr_a[name].dtype == arr_b[name].dtype and np.array_equal(arr_a[name], arr_b[name]), name


@pytest.mark.parametrize("mode", ["exact", "feature"])
def test_replay_from_snapshot_is_bit_identical(mode):
    log = _log(1, 60)
    straight, first = make(0.5, mode), make(0.5, mode)
    for t, x, y, w in log:
        straight.update(t, x, y, w)
    straight.delete("bob", straight.entries("bob")[0][0])
    for t, x, y, w in log[:25]:
        first.update(t, x, y, w)
    resumed = OnlineMultiTaskLearner.from_snapshot(*_roundtrip(*first.snapshot()))
    for t, x, y, w in log[25:]:
        resumed.update(t, x, y, w)
    resumed.delete("bob", resumed.entries("bob")[0][0])
    _same_state(straight, resumed)
    assert np.array_equal(straight.predict("ann", QUERY), resumed.predict("ann", QUERY))
    assert np.array_equal(straight.published()["H"], resumed.published()["H"])


@pytest.mark.parametrize("mode", ["exact", "feature"])
def test_empty_learner_snapshot_and_predict(mode):
    empty = make(0.5, mode)
    assert empty.predict("ann", QUERY).tolist() == [0.0] * len(QUERY)
    resumed = OnlineMultiTaskLearner.from_snapshot(*_roundtrip(*empty.snapshot()))
    for learner in (empty, resumed):
        learner.update("ann", ITEMS[0], 1.0)
    _same_state(empty, resumed)


def test_update_many_is_update_in_a_loop():
    log = _log(2, 40)
    one, many = make(0.5, "exact"), make(0.5, "exact")
    keys = [one.update(*triple) for triple in log]
    keys_many = many.update_many([t for t, *_ in log], np.array([x for _, x, _, _ in log]),
                                 [y for _, _, y, _ in log], [w for *_, w in log])
    assert keys_many.tolist() == keys
    _same_state(one, many)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m: m.update(0, [1.0, 2.0], 1.0), "has 2 features"),
        (lambda m: m.update(0, [1.0, np.nan, 0.0], 1.0), "NaN"),
        (lambda m: m.update(0, [1.0, 2.0, 0.0], np.inf), "y must be a finite"),
        (lambda m: m.update(0, [1.0, 2.0, 0.0], 1.0, w=0.0), "w must be"),
        (lambda m: m.update(True, [1.0, 2.0, 0.0], 1.0), "bool"),
        (lambda m: m.update(1.5, [1.0, 2.0, 0.0], 1.0), "int or a str"),
    ],
)
def test_bad_input_is_a_clear_error(call, message):
    learner = make(0.5, "exact")
    learner.update(0, ITEMS[0], 1.0)
    with pytest.raises(ValueError, match=message):
        call(learner)
    assert learner.n_updates == 1  # nothing half-applied


def test_unknown_entry_and_singular_kernel():
    learner = OnlineMultiTaskLearner(0.5, 0.1, {"name": "linear"}, shared_kernel={"name": "linear"})
    with pytest.raises(UnknownEntryError):
        learner.delete("nobody", 0)
    for i in range(3):
        learner.update(0, ITEMS[i], 1.0)
    # a linear K̄ in R³ has rank 3: a 4th distinct input has pivot 0 -> feature-map mode advice
    with pytest.raises(ValueError, match="feature-map mode"):
        learner.update(0, ITEMS[3], 1.0)
    with pytest.raises(ValueError, match="exactly one of"):
        OnlineMultiTaskLearner(0.5, 0.1, {"name": "linear"})
    with pytest.raises(ValueError, match="kernel spec"):
        OnlineMultiTaskLearner(0.5, 0.1, {"name": "poly"}, shared_kernel={"name": "linear"})


@settings(max_examples=30, deadline=None)
@given(
    ops=operations,
    own=st.lists(st.tuples(st.integers(0, 5), st.floats(-2, 2), st.floats(0.2, 3.0)), min_size=0, max_size=8),
    alpha=st.sampled_from([0.0, 0.4, 1.0]),
    mode=st.sampled_from(["exact", "feature"]),
    passive=st.booleans(),
)
def test_client_predicts_what_the_server_would(ops, own, alpha, mode, passive):
    """Alg. 9: a client's local model equals the server's model of that user (spec §3.5).

    Active: the server holds the client's triples.  Passive: the server never sees them; the
    client's local replay must equal a server that had received them last.
    """
    from stairsense.models.multitask import OnlineMultiTaskClient

    server = make(alpha, mode)
    run([op[:4] + (False,) for op in ops], server)
    client = OnlineMultiTaskClient(server.params(), passive=passive)
    for item, y, w in own:
        client.add(ITEMS[item] + 0.5, y, w)  # +0.5: inputs the server may not have
    if passive:
        client.download(server.published())
    for item, y, w in own:
        server.update("me", ITEMS[item] + 0.5, y, w)
    if not passive:
        client.download(server.published())
    Xq = np.vstack([ITEMS, QUERY])
    np.testing.assert_allclose(client.predict(Xq), server.predict("me", Xq), rtol=0, atol=1e-9)
