"""Load config/{{name:config/app.json}} and resolve credentials (environment wins)."""
import base64
import json
import os
from pathlib import Path

DEFAULT_PATH = Path(__file__).resolve().parents[1] / "config" / "{{name:config/app.json}}"


def load(path: str | os.PathLike | None = None) -> dict:
    path = path or os.environ.get("TILECACHE_CONFIG") or DEFAULT_PATH
    with open(path, encoding="utf-8") as fh:
        cfg = json.load(fh)
    for section in ("cache", "upstream", "alerts"):
        if section not in cfg:
            raise ValueError(f"config missing section {section!r}")
    return cfg


def upstream_token(cfg: dict) -> str:
    """Bearer token for the tile vendor: TILECACHE_UPSTREAM_TOKEN, else the config value."""
    env = os.environ.get("TILECACHE_UPSTREAM_TOKEN")
    if env:
        return env
    encoded = cfg["upstream"].get("token_{{enc:s3:b64|hex}}", "")
    return {{enc:s3:base64.b64decode|bytes.fromhex}}(encoded).decode() if encoded else ""
