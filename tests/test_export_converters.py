"""skl2onnx converters for KOMDClassifier, EasyMKLSelector and the stair-step pipeline.

Oracle: the fitted scikit-learn estimators' own predict / decision_function / transform, as
skl2onnx's ``dump_data_and_model`` compares them.
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

ort = pytest.importorskip("onnxruntime")
skl2onnx = pytest.importorskip("skl2onnx")

from skl2onnx._supported_operators import sklearn_operator_name_map  # noqa: E402

from stairsense.export._converters import register_converters  # noqa: E402
from stairsense.export._graph import ALLOWED_OPS  # noqa: E402
from stairsense.models.mkl._easymkl import EasyMKLSelector  # noqa: E402
from stairsense.models.mkl._komd import KOMDClassifier  # noqa: E402
from stairsense.models.mkl._nystroem_komd import NystroemKOMDClassifier  # noqa: E402
from stairsense.models.stairstep._model import make_stairstep_pipeline  # noqa: E402

register_converters()


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(300, 30, n_informative=6, random_state=0)
    return X * 3 + 1, y


def _run(onx, X):
    sess = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: X})


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pipeline_to_onnx_matches_predict_and_decision_function(data, dtype):
    X, y = data
    pipe = make_stairstep_pipeline(k=8, gamma=0.3).fit(X, y)
    X_test = X[:120].astype(dtype)
    onx = skl2onnx.to_onnx(pipe, X_test[:1], options={KOMDClassifier: {"zipmap": False}})
    labels, scores = _run(onx, X_test)
    expected = pipe.decision_function(X_test.astype(np.float64))
    np.testing.assert_allclose(scores[:, 1], expected, atol=1e-4 if dtype == np.float32 else 1e-6)
    np.testing.assert_allclose(scores[:, 0], -scores[:, 1])
    np.testing.assert_array_equal(labels, pipe.predict(X_test.astype(np.float64)))
    for node in onx.graph.node:
        assert node.domain in ("", "ai.onnx.ml") and node.op_type in ALLOWED_OPS, node.op_type


def test_a_gated_nystroem_komd_converts_with_its_support_gate(data):
    """Points pushed out of the training data by noise are where the gate decides; ONNX Runtime agrees."""
    X, y = data
    komd = NystroemKOMDClassifier(n_landmarks=40, lam=0.05, gamma=0.01, support_quantile=0.0, random_state=0).fit(X, y)
    noise = np.random.default_rng(0).normal(scale=3.0, size=(300, X.shape[1]))
    X_test = np.vstack([X[:100], X + noise, X + 1.5 * noise]).astype(np.float32)
    onx = skl2onnx.to_onnx(komd, X_test[:1], options={id(komd): {"zipmap": False}})
    labels, scores = _run(onx, X_test)
    expected = komd.decision_function(X_test.astype(np.float64))
    np.testing.assert_allclose(scores[:, 1], expected, atol=1e-5)
    np.testing.assert_array_equal(labels, komd.predict(X_test.astype(np.float64)))
    ungated = clone(komd).set_params(support_quantile=None).fit(X, y).decision_function(X_test.astype(np.float64))
    assert np.any((ungated >= 0) & (expected < 0))  # the gate decided some of them
    assert {"ReduceMax", "Min"} <= {node.op_type for node in onx.graph.node}


def test_string_labels_and_selector_alone(data):
    X, y = data
    names = np.array(["flat", "stairs"])[y]
    komd = KOMDClassifier(gamma=0.05).fit(X, names)
    onx = skl2onnx.to_onnx(komd, X[:1].astype(np.float32), options={id(komd): {"zipmap": False}})
    labels, _ = _run(onx, X[:50].astype(np.float32))
    np.testing.assert_array_equal(labels, komd.predict(X[:50]))
    selector = EasyMKLSelector(k=5).fit(X, y)
    (selected,) = _run(skl2onnx.to_onnx(selector, X[:1].astype(np.float32)), X[:50].astype(np.float32))
    np.testing.assert_array_equal(selected, selector.transform(X[:50]).astype(np.float32))


def test_zipmap_output_gives_per_class_scores(data):
    X, y = data
    komd = KOMDClassifier(gamma=0.05).fit(X, y)
    labels, scores = _run(skl2onnx.to_onnx(komd, X[:1].astype(np.float32)), X[:3].astype(np.float32))
    assert [s[1] for s in scores] == pytest.approx(komd.decision_function(X[:3]), abs=1e-5)


def test_old_opset_is_refused_with_advice(data):
    X, y = data
    komd = KOMDClassifier(gamma=0.05).fit(X, y)
    with pytest.raises(RuntimeError, match="target_opset=18"):
        skl2onnx.to_onnx(komd, X[:1].astype(np.float32), target_opset=15)


def test_registration_is_idempotent_and_never_overwrites():
    register_converters()  # ours already: nothing happens
    previous = sklearn_operator_name_map[KOMDClassifier]
    sklearn_operator_name_map[KOMDClassifier] = "SomebodyElsesKOMD"
    try:
        with pytest.raises(RuntimeError, match="will not overwrite"):
            register_converters()
    finally:
        sklearn_operator_name_map[KOMDClassifier] = previous
