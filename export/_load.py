"""Opening any stair-step model file: the one rule replay, evaluate and energy share.

A file named ``*.onnx`` or ``*.ort`` is an export, run through ONNX Runtime as on the phone
(:class:`OnnxStairModel`); any other file is a ``stairsense train`` model (:func:`load_model`).
Both answer ``config``, ``predict_windows`` and ``decision_windows`` the same way.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from stairsense.models import StairstepModel, load_model

from ._export import build_onnx_model
from ._runtime import OnnxModelError, OnnxStairModel, _is_ort_format, _read_onnx

__all__ = ["EXPORT_SUFFIXES", "MODEL_FILE_FIX", "load_stair_model", "inference_graph"]

#: Names of exported model files; every other name is read as a ``stairsense train`` model.
EXPORT_SUFFIXES = (".onnx", ".ort")

#: What to pass instead of a file that is not a model.
MODEL_FILE_FIX = "pass a model written by `stairsense train --out` or an .onnx/.ort from `stairsense export --out`"


def load_stair_model(path) -> StairstepModel | OnnxStairModel:
    """The model in ``path``, chosen by its name (:data:`EXPORT_SUFFIXES`).

    Raises
    ------
    FileNotFoundError
        When ``path`` is not a file; the message names it and what to pass.
    ValueError
        (:class:`~stairsense.models.ModelFileError`, :class:`OnnxModelError`) when the file is
        foreign, truncated, corrupt or from another format version, naming it and the fix.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: {'is a folder, not' if path.is_dir() else 'no such'} model file; "
                                f"{MODEL_FILE_FIX}")
    if path.suffix in EXPORT_SUFFIXES:
        return OnnxStairModel(path)
    return load_model(path)


def inference_graph(model: StairstepModel | OnnxStairModel):
    """The ONNX graph a phone runs for ``model``, to count its operations (the energy model).

    An export's own graph; for a trained model, the fp32 graph with every support vector that
    ``stairsense export --precision fp32 --max-kb 0`` would write.

    Returns
    -------
    graph : onnx.ModelProto
    selected, input_names : list or None
        The features the graph computes and the model's input feature names; None for an export,
        whose metadata holds them.
    """
    if isinstance(model, StairstepModel):
        selected = np.flatnonzero(model.pipeline[-2].get_support()).tolist()
        return build_onnx_model(model, "fp32")[0], selected, list(model.feature_names)
    if _is_ort_format(model.path, model.path.read_bytes()[:8]):
        raise OnnxModelError(f"{model.path}: an ORT-format file keeps no ONNX graph to count; pass the .onnx "
                             "exported beside it")
    return _read_onnx(model.path), None, None
