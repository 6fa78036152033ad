"""Gzip-compressed JSON Lines encoding used for telemetry batches."""
import gzip
import json


def encode(records):
    """Records -> gzip bytes, one compact JSON object per line (sorted keys)."""
    text = "".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in records)
    return gzip.compress(text.encode(), mtime=0)


def decode(blob):
    return [json.loads(line) for line in gzip.decompress(blob).decode().splitlines() if line]
