"""stairsense: streaming phone-motion pipeline and stair-step recognition."""
from importlib.metadata import PackageNotFoundError, version

from .config import PipelineConfig

try:
    __version__ = version("stairsense")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["PipelineConfig", "__version__"]
