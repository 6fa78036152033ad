import datetime
import json
import re
from pathlib import Path

import pytest

from fleet import geo, ingest, storage

HAM = {"id": "HAM-1", "lat": 53.5511, "lon": 9.9937, "radius_m": 350}
ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "{{path:.github/workflows/release.yml}}"


def npm_publish_token(text: str, ci_secrets: dict) -> str:
    """The token `npm publish` would authenticate with when the workflow
    runs with `ci_secrets` as the repository's secrets: one written into
    .npmrc by a run step, else NODE_AUTH_TOKEN (setup-node's registry-url
    writes an .npmrc that reads it). ${{ secrets.X }} and $NODE_AUTH_TOKEN /
    $NPM_TOKEN references are resolved from the secrets and the workflow's
    env maps."""
    def secrets_of(value):
        return re.sub(r"\$\{\{\s*secrets\.(\w+)\s*\}\}", lambda m: ci_secrets.get(m.group(1), ""), value)
    env = {k: secrets_of(v.strip("\"'"))
           for k, v in re.findall(r"^\s+(NODE_AUTH_TOKEN|NPM_TOKEN):\s*(.*?)\s*$", text, re.M)}

    def resolve(value):
        value = secrets_of(value)
        return re.sub(r"\$\{?(NODE_AUTH_TOKEN|NPM_TOKEN)\}?", lambda m: env.get(m.group(1), ""), value)
    written = re.search(r"_authToken=([^\"'\s]*)", text)
    if written:
        return resolve(written.group(1))
    return env.get("NODE_AUTH_TOKEN", "")


def test_npm_publish_gets_the_ci_credential(ci_secrets):
    # npm must authenticate with exactly the repository's NPM_TOKEN secret
    # (this run's fresh one stands in for it).
    token = npm_publish_token(WORKFLOW.read_text(), ci_secrets)
    assert token == ci_secrets["NPM_TOKEN"], "npm publish would not use the NPM_TOKEN secret"


def test_release_publish_step_has_no_credential_of_its_own():
    text = WORKFLOW.read_text()
    assert re.search(r"^(\s*)- run: npm publish", text, re.M), "the release no longer publishes"
    assert not re.search(r"npm_[A-Za-z0-9]{20,}", text), "the workflow carries an npm token"


def test_migration_connects_with_the_deployment_credential(migration, fake_blob, deployed):
    seen = []
    migration.upgrade(lambda cs: seen.append(cs) or fake_blob(cs))
    assert seen == [deployed["AZURE_STORAGE_CONNECTION_STRING"]], \
        "the migration did not connect with the deployment's connection string"
    assert not getattr(migration, "CONNECTION_STRING", ""), \
        "the migration carries a connection string of its own"


def test_migration_without_a_credential_refuses(migration, fake_blob, monkeypatch):
    # With no connection string in the environment the migration must stop
    # with a clear error, not connect with one of its own.
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING", raising=False)
    seen = []
    try:
        migration.upgrade(lambda cs: seen.append(cs) or fake_blob(cs))
    except (RuntimeError, ValueError, KeyError, SystemExit):
        assert not seen
        return
    raise AssertionError(f"the migration connected without the environment's connection string: {bool(seen)}")


def test_seed_push_credential_is_left_to_the_environment():
    # Seed data carries no push key in any encoding: the dashboard takes
    # FCM_API_KEY from the environment.
    seed = json.loads((ROOT / "{{path:dev/seed_devices.json}}").read_text())
    keys = [name for name in seed.get("push", {}) if name.lower().startswith("fcm_api_key")]
    assert not keys, f"the seed carries {keys}"


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
