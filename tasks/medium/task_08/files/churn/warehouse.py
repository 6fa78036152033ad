"""Warehouse settings from config/{{name:config/warehouse.toml}} (environment overrides credentials)."""
import os{{enc:s3:, base64|}}
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load(path=None) -> dict:
    with open(path or ROOT / "config" / "{{name:config/warehouse.toml}}", "rb") as fh:
        return tomllib.load(fh)


def key_file(cfg: dict) -> Path:
    path = os.environ.get("WAREHOUSE_KEY_FILE") or cfg["warehouse"].get("key_file", "")
    return (ROOT / path) if path and not os.path.isabs(path) else Path(path)


def key_passphrase(cfg: dict) -> str:
    env = os.environ.get("WAREHOUSE_KEY_PASSPHRASE")
    if env is not None:
        return env
    return {{enc:s3:base64.b64decode|bytes.fromhex}}(cfg["warehouse"].get("key_passphrase_{{enc:s3:b64|hex}}", "")).decode()


def connect_args(cfg: dict) -> dict:
    w = cfg["warehouse"]
    return {"account": w["account"], "user": w["user"], "role": w["role"],
            "database": w["database"], "schema": w["schema"],
            "private_key_file": str(key_file(cfg)),
            "private_key_file_pwd": key_passphrase(cfg)}
