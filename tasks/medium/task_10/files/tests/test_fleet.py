import base64
import binascii
import datetime
import json
import re
from pathlib import Path

import pytest

from fleet import geo, ingest, storage

HAM = {"id": "HAM-1", "lat": 53.5511, "lon": 9.9937, "radius_m": 350}
ROOT = Path(__file__).resolve().parents[1]
# A masked or placeholder credential cannot authenticate: a "fix" that
# leaves CI, the migration or the dev seed without a usable credential
# must not pass.
PLACEHOLDER = re.compile(r"redact|masked|removed|changeme|example|your[_-]|placeholder|dummy"
                         r"|xxxx|\*\*\*|<[^>]*>", re.I)


def looks_real(pattern, value) -> bool:
    return (isinstance(value, str) and bool(re.fullmatch(pattern, value))
            and not PLACEHOLDER.search(value) and len(set(value)) >= 8)


def usable_azure(conn: str) -> bool:
    try:
        parts = storage.parse_connection_string(conn)
        key = base64.b64decode(parts["AccountKey"], validate=True)
    except (KeyError, ValueError, binascii.Error):
        return False
    return len(key) == 64 and looks_real(r"[a-z0-9]{3,24}", parts["AccountName"])


def test_npm_publish_gets_a_token():
    # Either the repository secret reaches npm, or (today) a usable token
    # is written to .npmrc; without one the release cannot publish.
    text = (ROOT / "{{path:.github/workflows/release.yml}}").read_text()
    if re.search(r"(NODE_AUTH_TOKEN|NPM_TOKEN):\s*\$\{\{\s*secrets\.\w+\s*\}\}", text):
        return
    m = re.search(r"_authToken=([^\"'\s]*)", text)
    assert m, "the release workflow gives npm no token"
    assert re.fullmatch(r"\$\{\{\s*secrets\.\w+\s*\}\}|\$\{?NPM_TOKEN\}?", m.group(1)) \
        or looks_real(r"npm_[A-Za-z0-9]{36}", m.group(1)), f"unusable npm token {m.group(1)!r}"


def test_migration_default_is_usable_or_left_to_the_environment(migration):
    value = getattr(migration, "CONNECTION_STRING", None)
    assert value == "" or (isinstance(value, str) and usable_azure(value)), \
        "the migration's default connection string is not usable"


def test_migration_without_configuration_refuses(migration, fake_blob, monkeypatch):
    # With no connection string anywhere the migration must stop with a
    # clear error, not connect with nothing; with one it must use it.
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING", raising=False)
    seen = []
    try:
        migration.upgrade(lambda cs: seen.append(cs) or fake_blob(cs))
    except (RuntimeError, ValueError, KeyError, SystemExit):
        assert not seen
        return
    assert seen and usable_azure(seen[0]), "the migration connected without a usable connection string"


def test_release_publishes_with_the_npm_token():
    # The publish step authenticates with a repository secret (job or step
    # env), or (today) with a usable token written to .npmrc.
    text = (ROOT / "{{path:.github/workflows/release.yml}}").read_text()
    step = re.search(r"^(\s*)- run: npm publish.*\n((?:\1  .*\n)*)", text, re.M)
    assert step, "the release no longer publishes"
    ref = re.search(r"(NODE_AUTH_TOKEN|NPM_TOKEN):\s*\$\{\{\s*secrets\.\w+\s*\}\}", text)
    written = re.search(r"_authToken=(npm_\w+)", text)
    assert ref or (written and looks_real(r"npm_[A-Za-z0-9]{36}", written.group(1))), \
        "npm publish runs without the NPM_TOKEN secret or a usable token"


def test_seed_push_key_is_usable_or_left_to_the_environment():
    seed = json.loads((ROOT / "{{path:dev/seed_devices.json}}").read_text())
    push = seed.get("push", {})
    for name, encoded in push.items():
        if not name.startswith("fcm_api_key"):
            continue
        try:
            value = (base64.b64decode(encoded, validate=True) if name.endswith("_b64")
                     else bytes.fromhex(encoded)).decode()
        except (binascii.Error, ValueError, UnicodeDecodeError):
            value = None
        assert looks_real(r"AIza[A-Za-z0-9_-]{35}", value), f"{name} does not decode to a key"


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
