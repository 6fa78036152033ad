import pytest

from services.ingest import batcher
from shared import jsonl

BASE = 1_741_000_000_000  # 2025-03-03T11:06:40Z


def reading(device, offset_s, value=1.0):
    return {"device_id": device, "ts_ms": BASE + offset_s * 1000, "metric": "temp_c", "value": value}


def test_groups_by_device_and_hour():
    out = batcher.batches([reading("d1", 0), reading("d2", 5), reading("d1", 3600)])
    assert sorted(out) == [
        "raw/2025/03/03/11/d1/part-0000.jsonl.gz",
        "raw/2025/03/03/11/d2/part-0000.jsonl.gz",
        "raw/2025/03/03/12/d1/part-0000.jsonl.gz",
    ]


def test_splits_parts_and_sorts_by_time():
    out = batcher.batches([reading("d1", s) for s in (30, 10, 20)], max_batch=2)
    first = jsonl.decode(out["raw/2025/03/03/11/d1/part-0000.jsonl.gz"])
    assert [r["ts_ms"] for r in first] == [BASE + 10_000, BASE + 20_000]
    assert len(out) == 2


def test_rejects_incomplete_or_non_numeric():
    with pytest.raises(ValueError, match="missing"):
        batcher.validate({"device_id": "d1"})
    with pytest.raises(ValueError, match="numeric"):
        batcher.validate(reading("d1", 0, value="hot"))
