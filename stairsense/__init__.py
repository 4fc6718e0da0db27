"""stairsense: streaming phone-motion pipeline and stair-step recognition.

The composition layer: the functions that run logs through the
on-device front end (``replay``, ``window_dataset``, ``front_end``). The stages live in
``stairsense.stream``, ``stairsense.features``, ``stairsense.models`` and ``stairsense.export``;
:class:`PipelineConfig` lives in the bottom layer (``stairsense.stream``) and is re-exported here.
"""
from stairsense.stream.lazy import lazy_exports as _lazy_exports

# Resolved on first use, so `import stairsense` and `stairsense --help` stay cheap: the CLI imports
# what each command needs when it runs.
__getattr__, __dir__ = _lazy_exports(__name__, {
    "._version": ("__version__",),
    "stairsense.stream": ("PipelineConfig",),
    ".pipeline": ("ReplayReport", "WindowDataset", "front_end", "match_steps", "replay", "window_dataset"),
})

__all__ = [
    "PipelineConfig",
    "replay",
    "ReplayReport",
    "window_dataset",
    "WindowDataset",
    "front_end",
    "match_steps",
    "__version__",
]
