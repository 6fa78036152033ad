import json
import urllib.parse

import pytest

from tilecache import cache, clients, config


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
