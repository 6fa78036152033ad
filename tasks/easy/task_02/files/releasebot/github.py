"""Minimal GitHub REST client; the transport is injectable for tests and dry runs."""
import json
import urllib.request

from . import config


def auth_headers(token: str | None = None) -> dict:
    token = config.GITHUB_TOKEN if token is None else token
    return {
        "Accept": "application/vnd.github+json",
        "Authorization": f"Bearer {token}",
        "User-Agent": "nw-releasebot/2.1",
        "X-GitHub-Api-Version": "2022-11-28",
    }


def build_request(path: str) -> urllib.request.Request:
    return urllib.request.Request(config.GITHUB_API + path, headers=auth_headers())


def _urlopen(req):
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.read()


def latest_releases(repo: str, limit: int = 5, transport=_urlopen) -> list[dict]:
    raw = transport(build_request(f"/repos/{repo}/releases?per_page={int(limit)}"))
    items = json.loads(raw)
    return [{"tag": r["tag_name"], "name": r.get("name") or r["tag_name"],
             "published_at": r.get("published_at")} for r in items[:limit]]
