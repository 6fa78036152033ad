import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

USAGE = """account_id,seats,logins,active_seats,tickets_open,days_since_last_login
acme,10,40,9,0,1
acme,10,38,9,1,0
bluefin,25,3,4,4,12
bluefin,25,1,2,6,19
corvid,5,12,5,0,2
"""


@pytest.fixture
def usage_csv(tmp_path):
    p = tmp_path / "usage.csv"
    p.write_text(USAGE)
    return p
