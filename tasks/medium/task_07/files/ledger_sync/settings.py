"""Settings from config/{{name:config/settings.ini}}; credentials may be overridden by the environment."""
import configparser
import decimal
import os
from pathlib import Path

DEFAULT_PATH = Path(__file__).resolve().parents[1] / "config" / "{{name:config/settings.ini}}"


def load(path=None) -> configparser.ConfigParser:
    cp = configparser.ConfigParser()
    if not cp.read(path or DEFAULT_PATH, encoding="utf-8"):
        raise FileNotFoundError(path or DEFAULT_PATH)
    return cp


def alert_threshold(cp) -> decimal.Decimal:
    return decimal.Decimal(cp.get("ledger", "alert_threshold", fallback="25000"))


def twilio_api_key(cp) -> str:
    return os.environ.get("TWILIO_API_KEY") or cp.get("twilio", "api_key", fallback="")
