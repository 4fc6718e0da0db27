"""Export of a trees head (``TrainRecipe(head="trees")``): the GEMM form of the trees and the gate.

Oracles: the estimator's own traversal of its node arrays (``GatedTreesClassifier.tree_margin``,
itself checked against scikit-learn's booster in tests/test_gated_trees.py) for the GEMM tensors
evaluated in NumPy; the Python stair-step model for the exported file, run by ONNX Runtime on a
simulated building walk with air pressure.
"""
from __future__ import annotations

import copy
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402

from stairsense import PipelineConfig, window_dataset  # noqa: E402
from stairsense.export import build_onnx_model, export_model, support_budget, validation_windows  # noqa: E402
from stairsense.export._graph import ALLOWED_OPS  # noqa: E402
from stairsense.export._trees import tree_tensors  # noqa: E402
from stairsense.models import TRAIN_DEFAULTS, GatedTreesClassifier  # noqa: E402
from stairsense.stream import Barometer, Person, building_walk, simulate  # noqa: E402

CONFIG = PipelineConfig(rate_hz=30, barometer=True)


def _walk(seed):
    rng = np.random.default_rng(seed)
    schedule, person = building_walk(Person.draw(rng), rng)
    return simulate(schedule=schedule, seed=seed, person=person, barometer=Barometer(), rate_hz=50)


@pytest.fixture(scope="module")
def model():
    data = window_dataset([_walk(s) for s in range(6)], CONFIG)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EasyMKL's convergence note on a small set
        return TRAIN_DEFAULTS.replace(config=CONFIG, k=20, head="trees").fit(data.X, data.y, data.feature_names)


@pytest.mark.parametrize("max_leaves", [8, 5, 2])
def test_gemm_tensors_reach_the_leaf_the_traversal_reaches(max_leaves):
    X, y = make_classification(500, n_features=6, random_state=0)
    trees = GatedTreesClassifier(n_trees=30, max_leaves=max_leaves, support_quantile=None, random_state=0).fit(X, y)
    t = tree_tensors(trees)
    X_new = np.random.default_rng(1).normal(scale=2.0, size=(300, 6))
    goes_true = (X_new.astype(np.float32)[:, t["feature"]] <= t["split"]).astype(np.float64)  # (N, T, L−1)
    counts = np.einsum("nti,til->ntl", goes_true, t["paths"].astype(np.float64))
    reached = counts >= t["depth"]
    # the graph builds C from each node's leaf runs and derives D from C (each leaf's +1 entries)
    first, middle, last = np.moveaxis(t["ranges"], -1, 0)[..., None]
    leaf = np.arange(max_leaves)
    np.testing.assert_array_equal((leaf >= first).astype(int) - 2 * (leaf >= middle) + (leaf >= last), t["paths"])
    np.testing.assert_array_equal(np.maximum(t["paths"], 0).sum(axis=1), t["depth"])
    real = np.abs(t["paths"]).sum(axis=1) > 0  # padded leaves have an all-zero column (and weight 0)
    assert np.all((reached & real).sum(axis=2) == 1)  # exactly one real leaf per tree
    margin = trees.baseline_ + (reached * t["weight"]).sum(axis=(1, 2))
    np.testing.assert_allclose(margin, trees.tree_margin(X_new), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_exported_trees_decide_as_python(model, precision, tmp_path):
    logs = [_walk(0), _walk(40)]  # a training walk, so that some windows are decided STAIR
    report = export_model(model, tmp_path / "t.onnx", precision=precision, validation=logs)
    assert report.parity["decision_agreement"] >= 0.995
    assert report.parity["median_abs_diff_vs_stored"] < 1e-5  # a few windows on a split may jump by a leaf
    assert report.n_support_vectors == report.n_support_vectors_trained == model.pipeline[-1].support_vectors_.shape[0]
    graph = onnx.load(tmp_path / "t.onnx")
    assert {n.op_type for n in graph.graph.node} <= ALLOWED_OPS
    samples, offsets, context, height = validation_windows(logs, CONFIG)
    session = ort.InferenceSession(str(tmp_path / "t.onnx"), providers=["CPUExecutionProvider"])
    stair = np.array([session.run(["stair"], {"samples": samples[a:b], "step_context": context[w:w + 1].astype(np.float32),
                                              "height": height[w:w + 1].astype(np.float32)})[0][0]
                      for w, (a, b) in enumerate(zip(offsets[:-1], offsets[1:]))])
    X = model.window_rows(samples, offsets, step_context=context, height=height)
    assert np.mean(stair.astype(bool) == (model.predict(X) == 1)) >= 0.995
    assert 0 < int(stair.sum()) < stair.size  # both decisions are checked


def test_the_onset_output_decides_as_python_and_the_file_votes_as_the_model(model, tmp_path):
    """The recipe's head has an onset threshold: the graph outputs its score too, and the exported
    file's (decision, onset) pairs are the Python model's, so replay's vote counts the same."""
    from stairsense.export import OnnxStairModel
    from stairsense.export._runtime import ONSET_OUTPUT

    assert model.pipeline[-1].onset_threshold is not None  # the recipe's
    # Fitted on six walks, the trees are sure of nearly every window (log-odds about ±10); a lower
    # onset threshold than the recipe's makes sure some windows fall between the two. It goes in the
    # widest gap between the windows' log-odds below the decision threshold, so that no window sits
    # within a float32 rounding of it (the graph's trees compare in float32).
    model = copy.deepcopy(model)
    head = model.pipeline[-1]
    logs = [_walk(0), _walk(40)]
    samples, offsets, context, height = validation_windows(logs, CONFIG)
    X = model.window_rows(samples, offsets, step_context=context, height=height)
    below = np.sort(head.tree_margin(model.pipeline[:-1].transform(X)))
    below = below[below < head.threshold]
    widest = int(np.argmax(np.diff(below)))
    head.onset_threshold = float(below[widest:widest + 2].mean())
    report = export_model(model, tmp_path / "t.onnx", precision="fp32", validation=logs)
    assert report.parity["onset_agreement"] >= 0.995
    onnx_model = OnnxStairModel(report.path)
    assert onnx_model.onset_threshold == head.onset_threshold
    assert ONSET_OUTPUT in {o.name for o in onnx.load(report.path).graph.output}
    # oracle: the same trees and gate at the onset threshold, by the estimator's own decision function
    lowered = copy.deepcopy(head).set_params(threshold=head.onset_threshold)
    expected_onset = lowered.predict(model.pipeline[:-1].transform(X)) == 1
    decided, onset = model.decide(X)
    np.testing.assert_array_equal(onset, expected_onset)
    np.testing.assert_array_equal(decided, model.predict(X))
    assert (onset & (decided == 0)).any(), "the onset threshold should add candidates below the decision"
    onnx_decided, onnx_onset = onnx_model.decide_windows(samples, offsets, step_context=context, height=height)
    assert np.mean(onnx_onset == onset) >= 0.995 and np.mean(onnx_decided == decided) >= 0.995


def test_a_trees_head_has_no_support_set_to_cut(model):
    with pytest.raises(ValueError, match="no support set to reduce"):
        build_onnx_model(model, "int8", max_support_vectors=10)
    assert support_budget(model, 1 << 20) is None
    with pytest.raises(ValueError, match="no support set to cut"):
        support_budget(model, 4096)


def _split_less_model():
    """Too few windows for any split: every tree is a constant folded into the baseline."""
    data = window_dataset([_walk(7)], CONFIG)
    keep = np.r_[np.flatnonzero(data.y == 1)[:12], np.flatnonzero(data.y == 0)[:12]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return TRAIN_DEFAULTS.replace(config=CONFIG, k=5, head="trees").fit(data.X[keep], data.y[keep],
                                                                              data.feature_names)


def test_trees_without_a_split_export_their_constant(tmp_path):
    m = _split_less_model()
    assert m.pipeline[-1].tree_roots_.size == 0
    report = export_model(m, tmp_path / "c.onnx", validation=[_walk(8)])
    assert report.parity["decision_agreement"] == 1.0


def test_a_tie_decides_as_the_trees_do_in_python_and_in_the_file(tmp_path):
    """Score exactly 0 is NO_STAIR and no onset for the trees (scikit-learn's > 0), unlike KOMD's
    f − θ ≥ 0: the exported file and its runtime apply each head's own rule. A split-less head
    whose threshold is its constant, without the gate, scores 0 on every window, in float64 and
    in the graph's float32 alike."""
    from stairsense.export import OnnxStairModel

    m = _split_less_model()
    head = m.pipeline[-1]
    head.threshold = head.onset_threshold = float(np.float32(head.baseline_))
    head.baseline_ = head.threshold
    head.support_threshold_ = None
    logs = [_walk(8)]
    samples, offsets, context, height = validation_windows(logs, CONFIG)
    X = m.window_rows(samples, offsets, step_context=context, height=height)
    assert np.all(m.decision_function(X) == 0)
    decided, onset = m.decide(X)
    assert not decided.any() and not onset.any()
    report = export_model(m, tmp_path / "tie.onnx", validation=logs)
    assert report.parity["decision_agreement"] == report.parity["onset_agreement"] == 1.0
    assert report.parity["onnx_stair_windows"] == 0
    onnx_model = OnnxStairModel(report.path)
    inputs = {"step_context": context, "height": height}
    assert np.all(onnx_model.decision_windows(samples, offsets, **inputs) == 0)
    assert not onnx_model.predict_windows(samples, offsets, **inputs).any()
    onnx_decided, onnx_onset = onnx_model.decide_windows(samples, offsets, **inputs)
    assert not onnx_decided.any() and not onnx_onset.any()


def test_replay_and_evaluate_vote_each_flight_onset_as_the_oracle(model):
    """Replay's stair steps are the model's decisions on every kept window, voted by log with the
    onset candidates (``vote_decisions(..., onset=)``, itself checked against a median filter plus
    the onset rule in tests/test_step_vote.py); evaluate --model counts the same decisions."""
    from stairsense._evaluate_model import evaluate_model
    from stairsense.features import AMBIGUOUS
    from stairsense.models import save_model, vote_decisions
    from stairsense.pipeline import replay

    model = copy.deepcopy(model)
    model.pipeline[-1].onset_threshold = -10.0  # some candidates below the decision (the test above)
    log = _walk(42)  # a held-out walk whose stair decisions gain an onset
    ds = window_dataset([log], CONFIG, keep_unlabelled=True)
    decided, onset = model.decide(ds.X)
    voted = vote_decisions(decided, ds.t_start_ns, ds.t_end_ns, CONFIG.vote_steps, CONFIG.step_context_gap_s,
                           onset=onset)
    without = vote_decisions(decided, ds.t_start_ns, ds.t_end_ns, CONFIG.vote_steps, CONFIG.step_context_gap_s)
    assert voted.sum() > without.sum(), "the rule should add a flight's onset on this walk"
    assert replay(log, CONFIG, model=model).stair_steps == voted.sum()
    path = save_model(model, Path(tempfile.mkdtemp()) / "m.model")
    good = ds.y != AMBIGUOUS
    assert evaluate_model(path, [log])["overall"]["recall"] == \
        pytest.approx(np.sum((voted[good] == 1) & (ds.y[good] == 1)) / np.sum(ds.y[good] == 1))
