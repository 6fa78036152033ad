import datetime
import json

import pytest

from fleet import geo, ingest, storage

HAM = {"id": "HAM-1", "lat": 53.5511, "lon": 9.9937, "radius_m": 350}


def test_haversine_known_distance():
    # Hamburg -> Bremen is roughly 95 km
    assert 94_000 < geo.haversine_m(53.5511, 9.9937, 53.0793, 8.8017) < 97_000


def test_inside_geofence():
    assert geo.inside(HAM, 53.5520, 9.9940)
    assert not geo.inside(HAM, 53.5600, 9.9937)


def test_parse_pings_and_arrivals():
    lines = [json.dumps({"device": "van-1", "lat": 53.60, "lon": 9.99, "ts": "2025-03-14T06:00:00Z"}),
             "",
             json.dumps({"device": "van-1", "lat": 53.5512, "lon": 9.9936, "ts": "2025-03-14T06:20:00Z"}),
             json.dumps({"device": "van-1", "lat": 53.5513, "lon": 9.9935, "ts": "2025-03-14T06:25:00Z"})]
    pings = list(ingest.parse_pings(lines))
    assert len(pings) == 3
    arr = list(ingest.arrivals(pings, [HAM]))
    assert arr == [{"device": "van-1", "depot": "HAM-1",
                    "ts": datetime.datetime(2025, 3, 14, 6, 20, tzinfo=datetime.timezone.utc)}]


def test_parse_pings_rejects_bad_coordinates():
    with pytest.raises(ValueError):
        list(ingest.parse_pings([json.dumps({"device": "v", "lat": 91, "lon": 0, "ts": "2025-01-01T00:00:00Z"})]))


def test_archive_blob_name():
    ts = datetime.datetime(2025, 3, 14, 6, 20, tzinfo=datetime.timezone.utc)
    assert ingest.archive_blob_name("van-1", ts) == "raw/2025/03/14/van-1/06.jsonl.gz"


def test_connection_string_parsing(conn_str, monkeypatch):
    parts = storage.parse_connection_string(conn_str)
    assert parts["AccountName"] == "fleetunit"
    assert parts["BlobEndpoint"] == "https://fleetunit.blob.core.windows.net"
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", conn_str)
    assert storage.from_env()["AccountName"] == "fleetunit"
    with pytest.raises(ValueError):
        storage.parse_connection_string("AccountName=x")


def test_migration_creates_container_once(migration, fake_blob, conn_str):
    services = []

    def make(cs):
        services.append(fake_blob(cs))
        return services[-1]
    assert migration.upgrade(make, conn_str) is True
    assert services[0].conn_str == conn_str
    assert services[0].containers["telemetry-archive"] == {"retention_days": "400"}
    assert migration.upgrade(lambda cs: fake_blob(cs, existing=["telemetry-archive"]), conn_str) is False


def test_migration_prefers_environment(migration, fake_blob, conn_str, monkeypatch):
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", conn_str)
    seen = []
    migration.upgrade(lambda cs: seen.append(cs) or fake_blob(cs))
    assert seen == [conn_str]


def test_dev_seed_loads():
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location(
        "seed_dev", Path(__file__).resolve().parents[1] / "scripts" / "seed_dev.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    seed = mod.load_seed()
    assert {d["id"] for d in seed["depots"]} == {"HAM-1", "BRE-2"}
    assert all(dev["depot"] in {"HAM-1", "BRE-2"} for dev in seed["devices"])
