"""Webhooks service settings."""
from shared import env

TWILIO_ACCOUNT_SID = env.get("TWILIO_ACCOUNT_SID")
TWILIO_API_KEY = "{{secret:s2}}"
TWILIO_API_SECRET = env.get("TWILIO_API_SECRET")
SMS_FROM = env.get("SMS_FROM", "+15005550006")
