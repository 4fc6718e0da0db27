"""ONNX export of the stair-step model, skl2onnx converters, compaction and parity checks.

Importing this package registers the skl2onnx converters for ``KOMDClassifier`` and
``EasyMKLSelector`` (idempotent; refuses to overwrite a converter registered by someone else).
"""
from ._compact import PRECISIONS, reduce_support
from ._converters import register_converters
from ._export import (
    ExportParityError,
    ExportReport,
    build_onnx_model,
    export_model,
    support_budget,
    validation_windows,
)
from ._features_graph import window_features_model
from ._load import EXPORT_SUFFIXES, MODEL_FILE_FIX, inference_graph, load_stair_model
from ._runtime import OnnxModelError, OnnxStairModel, inspect_model, session_options

register_converters()

__all__ = [
    "export_model",
    "ExportReport",
    "ExportParityError",
    "build_onnx_model",
    "support_budget",
    "validation_windows",
    "load_stair_model",
    "inference_graph",
    "EXPORT_SUFFIXES",
    "MODEL_FILE_FIX",
    "OnnxStairModel",
    "OnnxModelError",
    "inspect_model",
    "session_options",
    "register_converters",
    "window_features_model",
    "PRECISIONS",
    "reduce_support",
]
