"""A tampered model file is refused at load time, naming the file, before it costs memory (issue 25).

The array payload is an ``.npz``: a zip whose members may be deflate-compressed and whose ``.npy``
headers claim a shape. A few MB of file must not make a load or a replay allocate gigabytes, and
arrays that do not fit together must be refused by ``load_model``, not fail later with NumPy's words.
"""
from __future__ import annotations

import hashlib
import io
import json
import tracemalloc
import zipfile

import numpy as np
import pytest

from stairsense import PipelineConfig
from stairsense.models.mkl import KOMDClassifier
from stairsense.models.stairstep._model import (ModelFileError, StairstepModel, load_model, make_stairstep_pipeline,
                                                save_model)


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 6))
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    return StairstepModel.train(make_stairstep_pipeline(k=3, lam=0.1, gamma=0.5), X, y,
                                config=PipelineConfig(rate_hz=30), feature_names=[f"f{i}" for i in range(6)])


def _arrays(path):
    payload = path.read_bytes().split(b"\n", 1)[1]
    with np.load(io.BytesIO(payload)) as npz:
        return {k: npz[k] for k in npz.files}


def _rewrite(path, payload: bytes):
    head = json.loads(path.read_bytes().split(b"\n", 1)[0])
    head.update(payload_bytes=len(payload), payload_sha256=hashlib.sha256(payload).hexdigest())
    path.write_bytes(json.dumps(head).encode() + b"\n" + payload)


def _npz(arrays, compression=zipfile.ZIP_STORED, raw: dict | None = None) -> bytes:
    """An npz of ``arrays``, plus members whose bytes are given as they are (``raw``)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for key, value in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asarray(value))
            archive.writestr(key + ".npy", member.getvalue())
        for key, data in (raw or {}).items():
            archive.writestr(key + ".npy", data)
    return buffer.getvalue()


def _claiming(shape, dtype=np.float64) -> bytes:
    """An ``.npy`` member whose header claims ``shape`` but which holds only 8 bytes of data."""
    member = io.BytesIO()
    np.lib.format.write_array_header_1_0(member, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                                                  "fortran_order": False, "shape": shape})
    return member.getvalue() + b"\0" * 8


def test_a_compressed_array_member_is_refused(model, tmp_path):
    """Deflate lets a 3 MB file hold gigabytes of zeros; the writer never compresses, so the reader refuses it."""
    path = save_model(model, tmp_path / "m.model")
    _rewrite(path, _npz(_arrays(path), zipfile.ZIP_DEFLATED))
    with pytest.raises(ModelFileError, match="compressed") as info:
        load_model(path)
    assert str(path) in str(info.value) and "stairsense train" in str(info.value)


def test_a_header_claiming_more_than_the_member_holds_is_refused_before_allocating(model, tmp_path):
    path = save_model(model, tmp_path / "m.model")
    arrays = _arrays(path)
    key = next(k for k in arrays if k.endswith("support_vectors_"))
    del arrays[key]
    _rewrite(path, _npz(arrays, raw={key: _claiming((10**7, 10**6))}))  # 80 TB claimed
    with pytest.raises(ModelFileError, match="claims") as info:
        load_model(path)
    assert str(path) in str(info.value)


def test_a_payload_larger_than_the_cap_is_refused_before_reading(model, tmp_path, monkeypatch):
    monkeypatch.setattr("stairsense.models.stairstep._model.MAX_PAYLOAD_BYTES", 1000)
    path = save_model(model, tmp_path / "m.model")
    with pytest.raises(ModelFileError, match="payload of .* bytes") as info:
        load_model(path)
    assert str(path) in str(info.value)


def _with_array(model, tmp_path, suffix, value):
    path = save_model(model, tmp_path / "m.model")
    arrays = _arrays(path)
    key = next(k for k in arrays if k.endswith(suffix))
    arrays[key] = value(arrays[key])
    _rewrite(path, _npz(arrays))
    return path


@pytest.mark.parametrize("suffix, value", [
    ("support_vectors_", lambda a: a[:, :-1]),  # one column fewer than the selected features
    ("support_vectors_", lambda a: a[:-1]),  # one row fewer than the dual coefficients
    ("dual_coef_", lambda a: np.concatenate([a, a])),
    ("scale.scale_", lambda a: a[:-1]),  # the scaler no longer matches the feature names
    ("select.ranking_", lambda a: a + 100),  # selects features the model does not have
    ("dual_coef_", lambda a: np.full_like(a, np.nan)),
])
def test_arrays_that_do_not_fit_together_are_refused_at_load(model, tmp_path, suffix, value):
    path = _with_array(model, tmp_path, suffix, value)
    with pytest.raises(ModelFileError) as info:
        load_model(path)
    assert str(path) in str(info.value) and "stairsense train" in str(info.value)


def test_the_kernel_over_the_support_vectors_is_built_in_bounded_blocks(monkeypatch):
    """A file may hold many support vectors (each a few bytes); scoring many windows against them must
    not allocate windows × support vectors at once."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    clf = KOMDClassifier(lam=0.1, gamma=0.5).fit(X, (X[:, 0] > 0).astype(int))
    clf.support_vectors_ = rng.normal(size=(4000, 2))
    clf.dual_coef_ = rng.normal(size=4000)
    windows = rng.normal(size=(2000, 2))  # the whole kernel: 64 MB
    squared = ((windows[:, None, :] - clf.support_vectors_[None]) ** 2).sum(-1)
    expected = np.exp(-clf.gamma_ * squared) @ clf.dual_coef_ + clf.intercept_
    monkeypatch.setattr("stairsense.models.mkl._komd.KERNEL_BLOCK_ELEMENTS", 1 << 16)
    tracemalloc.start()
    try:
        scores = clf.decision_function(windows)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(scores, expected, rtol=1e-9, atol=1e-9)
    assert peak < 8 << 20, f"peak {peak / 2**20:.0f} MB"
