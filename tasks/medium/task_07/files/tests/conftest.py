import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

STATEMENT = """Booking date;Reference;Amount;Currency;Purpose
03.03.2025;TRX-0001;-1.250,00;EUR;Office   rent March
04.03.2025;TRX-0002;31.500,00;EUR;Invoice 2025-118 Acme GmbH
04.03.2025;TRX-0003;89.99;;Card payment
"""


@pytest.fixture
def statement(tmp_path):
    p = tmp_path / "2025-03.csv"
    p.write_text(STATEMENT)
    return p
