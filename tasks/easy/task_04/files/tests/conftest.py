import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture
def summary_file(tmp_path):
    def _write(**overrides):
        data = {"message_type": "summary", "files_new": 42, "data_added": 3 * 1024 * 1024,
                "total_duration": 61.4, "snapshot_id": "9f1c2ab0", "errors": 0}
        data.update(overrides)
        path = tmp_path / "summary.json"
        path.write_text(json.dumps(data))
        return str(path)
    return _write
