import json
import os
import re
import urllib.parse
from pathlib import Path

import pytest

from tilecache import cache, clients, config

ROOT = Path(__file__).resolve().parents[1]
# A masked or placeholder credential cannot authenticate: a "fix" that
# leaves a deployment without a usable credential must not pass.
PLACEHOLDER = re.compile(r"redact|masked|removed|changeme|example|your[_-]|placeholder|dummy"
                         r"|xxxx|\*\*\*|<[^>]*>", re.I)
SHAPES = {"GOOGLE_MAPS_API_KEY": r"AIza[A-Za-z0-9_-]{35}",
          "SENDGRID_API_KEY": r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
          "TILECACHE_UPSTREAM_TOKEN": r"tok_(live|test)_[A-Za-z0-9]{24,}"}


def looks_real(name, value) -> bool:
    return (isinstance(value, str) and bool(re.fullmatch(SHAPES[name], value))
            and not PLACEHOLDER.search(value) and len(set(value)) >= 8)


def env_file_values(path: Path) -> dict:
    if not path.is_file():
        return {}
    pairs = (line.split("=", 1) for line in path.read_text().splitlines()
             if "=" in line and not line.lstrip().startswith("#"))
    return {k.strip(): v.strip().strip("\"'") for k, v in pairs}


def container_env() -> dict:
    """The tilecache container's environment as compose builds it: the
    env_file first, then `environment:` with ${VAR} taken from the host."""
    text = (ROOT / "{{path:docker-compose.yml}}").read_text()
    block = re.search(r"^  tilecache:\n((?:    .*\n|\n)*)", text, re.M)
    assert block, "compose has no tilecache service"
    body = block.group(1)
    env = {}
    m = re.search(r"^    env_file:\s*(\S+)", body, re.M)
    if m:
        path = ROOT / m.group(1)
        assert path.is_file(), f"compose reads a missing env_file {m.group(1)}"
        env.update(env_file_values(path))
    m = re.search(r"^    environment:\n((?:      .*\n)*)", body, re.M)
    for line in (m.group(1).splitlines() if m else []):
        key, _, value = line.strip().partition(":")
        value = value.strip().strip("\"'")
        env[key] = re.sub(r"\$\{(\w+)(:?-([^}]*))?\}",
                          lambda v, k=key: os.environ.get(v.group(1)) or v.group(3)
                          or os.environ.get(k, ""), value)
    return env


@pytest.mark.parametrize("name", ["GOOGLE_MAPS_API_KEY", "SENDGRID_API_KEY"])
def test_container_gets_usable_credentials(name):
    # The deploy host exports the real values (conftest plays that part).
    assert looks_real(name, container_env().get(name)), f"the container would start without {name}"


def test_compose_passes_the_maps_key_to_the_container():
    # Either a reference to the host's environment or a usable key; the
    # container must get one from somewhere.
    text = (ROOT / "{{path:docker-compose.yml}}").read_text()
    m = re.search(r"^\s+GOOGLE_MAPS_API_KEY:\s*(.*?)\s*$", text, re.M)
    assert m, "compose no longer passes GOOGLE_MAPS_API_KEY to tilecache"
    value = m.group(1).strip("\"'")
    assert (re.fullmatch(r"\$\{\w+(:?[-?][^}]*)?\}", value)
            or looks_real("GOOGLE_MAPS_API_KEY", value)), f"unusable GOOGLE_MAPS_API_KEY: {value!r}"


def test_sendgrid_key_is_provided_or_documented():
    # A committed env file that sets the key must set a usable one; a
    # placeholder belongs in .env.example, and the variable must be declared
    # in one of them (or passed through by compose).
    env = env_file_values(ROOT / "{{path:.env}}")
    if "SENDGRID_API_KEY" in env:
        assert looks_real("SENDGRID_API_KEY", env["SENDGRID_API_KEY"]), \
            "the env file sets an unusable SENDGRID_API_KEY"
    compose = (ROOT / "{{path:docker-compose.yml}}").read_text()
    assert ("SENDGRID_API_KEY" in env
            or "SENDGRID_API_KEY" in env_file_values(ROOT / ".env.example")
            or re.search(r"SENDGRID_API_KEY:\s*\S*\$\{SENDGRID_API_KEY", compose)), \
        "nothing declares SENDGRID_API_KEY any more"


def test_config_has_sections(cfg):
    assert cfg["upstream"]["url"].startswith("https://")
    assert cfg["cache"]["max_tiles"] > 0


def test_config_requires_sections(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"cache": {}}))
    with pytest.raises(ValueError):
        config.load(p)


@pytest.mark.parametrize("path,zxy", [("/tiles/0/0/0.png", (0, 0, 0)),
                                      ("/tiles/12/2047/1361.png", (12, 2047, 1361))])
def test_parse_tile_path(path, zxy):
    assert cache.parse_tile_path(path) == zxy


@pytest.mark.parametrize("path", ["/tiles/1/2/0.png", "/tiles/a/b/c.png", "/tiles/3/1/1.jpg"])
def test_parse_tile_path_rejects(path):
    with pytest.raises(ValueError):
        cache.parse_tile_path(path)


def test_lru_eviction_and_ttl(clock):
    c = cache.TileCache(max_tiles=2, ttl_seconds=60, clock=clock)
    c.put("a", b"A")
    c.put("b", b"B")
    assert c.get("a") == b"A"
    c.put("c", b"C")
    assert c.get("b") is None and len(c) == 2
    clock.now += 61
    assert c.get("a") is None
    assert (c.hits, c.misses) == (1, 2)


def test_upstream_token_prefers_environment(cfg, monkeypatch):
    monkeypatch.setenv("TILECACHE_UPSTREAM_TOKEN", "env-token")
    req = clients.tile_request(cfg, 3, 1, 2)
    assert req.full_url == cfg["upstream"]["url"] + "/3/1/2.png"
    assert req.get_header("Authorization") == "Bearer env-token"


def test_upstream_token_fallback_is_consistent(cfg, monkeypatch):
    monkeypatch.delenv("TILECACHE_UPSTREAM_TOKEN", raising=False)
    req = clients.tile_request(cfg, 0, 0, 0)
    assert req.get_header("Authorization") == f"Bearer {config.upstream_token(cfg)}"
    # Without the environment the token is the configured one: none at all
    # (the environment is required) or a usable vendor token.
    token = config.upstream_token(cfg)
    assert token == "" or looks_real("TILECACHE_UPSTREAM_TOKEN", token)


def test_geocode_url_uses_env_key(monkeypatch):
    monkeypatch.setenv("GOOGLE_MAPS_API_KEY", "maps-key-from-env")
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(clients.geocode_url("1 Main St")).query)
    assert q == {"address": ["1 Main St"], "key": ["maps-key-from-env"]}


def test_alert_request(cfg, monkeypatch):
    monkeypatch.setenv("SENDGRID_API_KEY", "sg-from-env")
    monkeypatch.setenv("TILECACHE_ALERT_TO", "a@b.example")
    req = clients.alert_request(cfg, "upstream errors", "5.2% errors")
    body = json.loads(req.data)
    assert req.get_header("Authorization") == "Bearer sg-from-env"
    assert body["personalizations"][0]["to"] == [{"email": "a@b.example"}]
    assert body["from"]["email"] == cfg["alerts"]["from"]
