"""The installed distribution's version, read on first use of ``stairsense.__version__``
(importing :mod:`importlib.metadata` alone costs about 20 ms, a tenth of ``stairsense --help``)."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("stairsense")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
