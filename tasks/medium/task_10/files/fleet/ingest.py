"""Parse JSON-lines pings, tag depot arrivals, name archive blobs."""
import datetime
import json

from . import geo


def parse_pings(lines):
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        rec = json.loads(line)
        lat, lon = float(rec["lat"]), float(rec["lon"])
        if not (-90 <= lat <= 90 and -180 <= lon <= 180):
            raise ValueError(f"line {n}: coordinates out of range")
        yield {"device": rec["device"], "lat": lat, "lon": lon,
               "ts": datetime.datetime.fromisoformat(rec["ts"].replace("Z", "+00:00"))}


def arrivals(pings, depots):
    """First ping of each device inside each depot's fence."""
    seen = set()
    for p in pings:
        for d in depots:
            if (p["device"], d["id"]) not in seen and geo.inside(d, p["lat"], p["lon"]):
                seen.add((p["device"], d["id"]))
                yield {"device": p["device"], "depot": d["id"], "ts": p["ts"]}


def archive_blob_name(device: str, ts: datetime.datetime) -> str:
    ts = ts.astimezone(datetime.timezone.utc)
    return f"raw/{ts:%Y/%m/%d}/{device}/{ts:%H}.jsonl.gz"
