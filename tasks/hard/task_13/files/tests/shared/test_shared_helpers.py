from datetime import datetime, timezone

from shared import jsonl
from shared.timeutil import from_epoch_ms, hour_bucket


def test_jsonl_round_trip_is_deterministic():
    rows = [{"b": 1, "a": "x"}, {"a": "y"}]
    assert jsonl.decode(jsonl.encode(rows)) == rows
    assert jsonl.encode(rows) == jsonl.encode(rows)


def test_hour_bucket_truncates_in_utc():
    dt = from_epoch_ms(1_741_000_000_123)
    assert dt.tzinfo is timezone.utc
    assert hour_bucket(dt) == datetime(2025, 3, 3, 11, 0, tzinfo=timezone.utc)
