import json
import os
import re
import urllib.parse
from pathlib import Path

import pytest

from tilecache import cache, clients, config

ROOT = Path(__file__).resolve().parents[1]


def env_file_values(path: Path) -> dict:
    if not path.is_file():
        return {}
    pairs = (line.split("=", 1) for line in path.read_text().splitlines()
             if "=" in line and not line.lstrip().startswith("#"))
    return {k.strip(): v.strip().strip("\"'") for k, v in pairs}


def container_env(host: dict) -> dict:
    """The tilecache container's environment as compose builds it on a
    deploy host whose environment is `host`: the env_file first, then
    `environment:` with ${VAR} (and ${VAR:-default}) taken from the host."""
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
        env[key] = re.sub(r"\$\{(\w+)(?::?[-?]([^}]*))?\}",
                          lambda v: host.get(v.group(1)) or v.group(2) or "", value)
    return env


# The container must get exactly the credentials the deploy host exports
# (this run's fresh ones): a key kept in compose or an env file, masked, or
# made up fails.
@pytest.mark.parametrize("name", ["GOOGLE_MAPS_API_KEY", "SENDGRID_API_KEY"])
def test_container_gets_the_deployment_credentials(name, deployed):
    assert container_env(deployed).get(name) == deployed[name], \
        f"the container would not get the deploy host's {name}"


def test_compose_passes_the_host_credential_to_the_container():
    text = (ROOT / "{{path:docker-compose.yml}}").read_text()
    m = re.search(r"^\s+GOOGLE_MAPS_API_KEY:\s*(.*?)\s*$", text, re.M)
    assert m, "compose no longer passes GOOGLE_MAPS_API_KEY to tilecache"
    value = m.group(1).strip("\"'")
    assert re.fullmatch(r"\$\{GOOGLE_MAPS_API_KEY(:?[-?][^}]*)?\}", value), \
        f"compose does not take GOOGLE_MAPS_API_KEY from the host: {value!r}"


def test_sendgrid_credential_is_declared():
    # Operators must learn that the host has to export the key: .env.example
    # documents it, or compose passes it through from the host.
    compose = (ROOT / "{{path:docker-compose.yml}}").read_text()
    assert ("SENDGRID_API_KEY" in env_file_values(ROOT / ".env.example")
            or re.search(r"SENDGRID_API_KEY:\s*\S*\$\{SENDGRID_API_KEY", compose)), \
        "nothing declares SENDGRID_API_KEY"


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


def test_upstream_credential_comes_only_from_the_deployment(cfg, deployed, monkeypatch):
    req = clients.tile_request(cfg, 0, 0, 0)
    assert req.get_header("Authorization") == f"Bearer {deployed['TILECACHE_UPSTREAM_TOKEN']}"
    # Without the environment there is no token: the config file must not
    # carry one of its own (in any encoding).
    monkeypatch.delenv("TILECACHE_UPSTREAM_TOKEN", raising=False)
    try:
        token = config.upstream_token(cfg)
    except (KeyError, ValueError, RuntimeError):
        token = ""
    assert not token, "the upstream token does not come from the environment"


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
