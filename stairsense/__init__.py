"""stairsense: streaming phone-motion pipeline and stair-step recognition.

The composition layer: ``replay`` runs a log through the on-device pipeline; ``window_dataset``
(from ``stairsense.features``) turns labelled logs into training rows. The stages live in
``stairsense.stream``, ``stairsense.features``, ``stairsense.models`` and ``stairsense.export``;
:class:`PipelineConfig` lives in the bottom layer (``stairsense.stream``) and is re-exported here.
"""
from importlib.metadata import PackageNotFoundError, version

from stairsense.features import WindowDataset, window_dataset
from stairsense.stream import PipelineConfig, match_steps
from stairsense.stream import run_front_end as front_end

from .pipeline import ReplayReport, replay

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
