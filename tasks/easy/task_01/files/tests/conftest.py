import datetime
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture
def fixed_now():
    return datetime.datetime(2025, 3, 14, 9, 30, 0, tzinfo=datetime.timezone.utc)
