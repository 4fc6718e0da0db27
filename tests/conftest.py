import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    """The real recordings: $STAIRSENSE_DATA, else ../shared/data beside the repository."""
    return Path(os.environ.get("STAIRSENSE_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = shared_data_dir()
    if not path.is_dir():
        pytest.skip(f"real recordings not found at {path} (set STAIRSENSE_DATA)")
    return path
