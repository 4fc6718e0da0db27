"""stairsense: streaming phone-motion pipeline and stair-step recognition.

The composition layer: the functions that run logs through the
on-device front end (``replay``, ``window_dataset``, ``front_end``). The stages live in
``stairsense.stream``, ``stairsense.features``, ``stairsense.models`` and ``stairsense.export``;
:class:`PipelineConfig` lives in the bottom layer (``stairsense.stream``) and is re-exported here.
"""
from importlib.metadata import PackageNotFoundError, version

from stairsense.stream import PipelineConfig

from .pipeline import ReplayReport, WindowDataset, front_end, match_steps, replay, window_dataset

try:
    __version__ = version("stairsense")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

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
