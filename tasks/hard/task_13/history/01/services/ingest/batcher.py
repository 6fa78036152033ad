"""Group device readings into hourly batches and S3 object keys."""
from collections import defaultdict

from services.ingest import settings
from shared import jsonl
from shared.timeutil import from_epoch_ms, hour_bucket


def validate(reading):
    missing = {"device_id", "ts_ms", "metric", "value"} - reading.keys()
    if missing:
        raise ValueError(f"reading missing {sorted(missing)}")
    if not isinstance(reading["value"], (int, float)):
        raise ValueError("value must be numeric")
    return reading


def object_key(device_id, bucket_start, part):
    return f"raw/{bucket_start:%Y/%m/%d/%H}/{device_id}/part-{part:04d}.jsonl.gz"


def batches(readings, max_batch=None):
    """{object_key: gzip bytes}; each device-hour is split into parts of max_batch."""
    max_batch = max_batch or settings.MAX_BATCH
    groups = defaultdict(list)
    for r in map(validate, readings):
        groups[(r["device_id"], hour_bucket(from_epoch_ms(r["ts_ms"])))].append(r)
    out = {}
    for (device, start), rows in sorted(groups.items()):
        rows.sort(key=lambda r: r["ts_ms"])
        for part, i in enumerate(range(0, len(rows), max_batch)):
            out[object_key(device, start, part)] = jsonl.encode(rows[i:i + max_batch])
    return out
