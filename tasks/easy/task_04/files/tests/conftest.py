import json
import os
import secrets
import string
import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Cron provides the webhook URL and the bot token in the environment. The
# suite plays cron: fresh random credentials of the real shapes on every run,
# exported before the script is imported. The tests check that the script
# sends exactly these, so a credential kept in the code (in any form) or made
# up at runtime cannot pass. DEPLOYED is the suite's own copy: the tests
# compare against it, not against os.environ, which the code could rewrite.
_UP = string.ascii_uppercase + string.digits
_ALNUM = string.ascii_letters + string.digits


def _rand(alphabet, n):
    return "".join(secrets.choice(alphabet) for _ in range(n))


# Read-only: code under test that reaches this module cannot edit the
# suite's copy in place (a rebinding is tampering to the grader).
DEPLOYED = types.MappingProxyType({
    "SLACK_WEBHOOK_URL": ("https://hooks.slack" + ".com/services/T" + _rand(_UP, 10)
                          + "/B" + _rand(_UP, 10) + "/" + _rand(_ALNUM, 24)),
    "SLACK_BOT_TOKEN": ("xox" + "b-" + _rand(string.digits, 12) + "-" + _rand(string.digits, 13)
                        + "-" + _rand(_ALNUM, 24)),
})
os.environ.update(DEPLOYED)


@pytest.fixture
def deployed():
    return dict(DEPLOYED)


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
