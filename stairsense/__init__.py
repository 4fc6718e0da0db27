"""stairsense: streaming phone-motion pipeline and stair-step recognition.

The composition layer: ``replay`` runs a log through the on-device pipeline; ``window_dataset``
(from ``stairsense.features``) turns labelled logs into training rows; ``recording_windows`` reads
recording paths (files and dataset folders) into the windows ``stairsense train`` and ``evaluate``
use; ``evaluate_model`` scores a model file on labelled recordings; ``front_end`` is
``stairsense.stream.run_front_end``. The stages live in ``stairsense.stream``,
``stairsense.features``, ``stairsense.models`` and ``stairsense.export``; :class:`PipelineConfig`
lives in the bottom layer (``stairsense.stream``) and is re-exported here.
"""
from stairsense.stream.lazy import lazy_exports as _lazy_exports

# Resolved on first use, so `import stairsense` and `stairsense --help` stay cheap: the CLI imports
# what each command needs when it runs.
__getattr__, __dir__ = _lazy_exports(__name__, {
    "._version": ("__version__",),
    "stairsense.stream": ("PipelineConfig", "match_steps", "front_end=run_front_end"),
    "stairsense.features": ("WindowDataset", "window_dataset"),
    ".pipeline": ("ReplayReport", "replay"),
    "._evaluate_model": ("evaluate_model",),
    "._recordings": ("RecordingWindows", "recording_windows"),
})

__all__ = [
    "PipelineConfig",
    "replay",
    "ReplayReport",
    "window_dataset",
    "WindowDataset",
    "recording_windows",
    "RecordingWindows",
    "front_end",
    "match_steps",
    "evaluate_model",
    "__version__",
]
