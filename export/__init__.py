"""ONNX export of the stair-step model, skl2onnx converters, compaction and parity checks.

The names resolve on first use (importing the package alone imports neither ONNX nor
scikit-learn, so ``stairsense.export.energy`` stays light); the first use of any of them registers
the skl2onnx converters for ``KOMDClassifier`` and ``EasyMKLSelector`` (idempotent; refuses to
overwrite a converter registered by someone else). Before calling ``skl2onnx.to_onnx`` on those
estimators without using this package otherwise, call :func:`register_converters`.
"""
from stairsense.stream.lazy import lazy_exports as _lazy_exports

_exported, __dir__ = _lazy_exports(__name__, {
    "._compact": ("PRECISIONS", "reduce_support"),
    "._converters": ("register_converters",),
    "._export": ("ExportParityError", "ExportReport", "build_onnx_model", "export_model", "support_budget",
                 "validation_windows"),
    "._features_graph": ("window_features_model",),
    "._load": ("EXPORT_SUFFIXES", "MODEL_FILE_FIX", "inference_graph", "load_stair_model"),
    "._runtime": ("OnnxModelError", "OnnxStairModel", "inspect_model", "session_options"),
})


def __getattr__(name: str):
    value = _exported(name)
    if name in __all__:
        from ._converters import register_converters

        register_converters()
    return value


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
