"""Payments service settings."""
LEDGER_URL = "http://ledger:8080"
# service token for payments -> ledger (issued by ledger admin, no expiry)
LEDGER_SERVICE_TOKEN = "{{secret:s7}}"
CARD_FEE_BPS = 290
CARD_FEE_FIXED_CENTS = 30
