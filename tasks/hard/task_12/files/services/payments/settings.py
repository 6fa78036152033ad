"""Payments service settings."""
from shared import env

LEDGER_URL = env.get("LEDGER_URL", "http://ledger:8080")
LEDGER_SERVICE_TOKEN = env.get("LEDGER_SERVICE_TOKEN")
CARD_FEE_BPS = int(env.get("CARD_FEE_BPS", "290"))
CARD_FEE_FIXED_CENTS = int(env.get("CARD_FEE_FIXED_CENTS", "30"))
