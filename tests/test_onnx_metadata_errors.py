"""Damaged ONNX metadata is refused with the key, the file and the fix, never a raw JSON error (issue 25)."""
from __future__ import annotations

import onnx
import pytest

from stairsense.cli import main
from stairsense.export import OnnxModelError, OnnxStairModel
from stairsense.export._features_graph import window_features_model
from stairsense.export._metadata import content_hash, read_metadata, write_metadata


def test_a_value_that_is_not_json_names_the_key_and_the_fix():
    with pytest.raises(OnnxModelError, match=r"metadata 'stairsense.config' is not valid JSON.*export the model again"):
        read_metadata({"stairsense.format": "stairsense-stairstep-onnx", "stairsense.config": "{not json"})


@pytest.fixture
def damaged(tmp_path):
    """An ONNX file whose config metadata is not JSON, re-stamped so that only the JSON is wrong."""
    model = write_metadata(window_features_model([0]), {"precision": "fp32", "config": {"rate_hz": 30}})
    for prop in model.metadata_props:
        if prop.key == "stairsense.config":
            prop.value = '{"rate_hz": 30'
    for prop in model.metadata_props:
        if prop.key == "stairsense.content_sha256":
            prop.value = content_hash(model)
    path = tmp_path / "damaged.onnx"
    onnx.save_model(model, str(path))
    return path


def test_loading_names_the_file(damaged):
    with pytest.raises(OnnxModelError, match="stairsense.config") as info:
        OnnxStairModel(damaged)
    assert str(damaged) in str(info.value)


def test_the_cli_prints_one_line_and_exits_2(damaged, capsys):
    assert main(["export", "--inspect", str(damaged)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(damaged) in err and "'stairsense.config' is not valid JSON" in err
    assert "export the model again" in err
