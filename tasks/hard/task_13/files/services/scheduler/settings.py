"""Scheduler settings."""
import base64
import os

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
ANTHROPIC_MODEL = os.environ.get("SUMMARY_MODEL", "claude-3-5-haiku-latest")
_ANTHROPIC_KEY_{{enc:s5:B64|HEX}} = "{{secret:s5:enc}}"
ANTHROPIC_API_KEY = {{enc:s5:base64.b64decode|bytes.fromhex}}(_ANTHROPIC_KEY_{{enc:s5:B64|HEX}}).decode()
SUMMARY_MAX_TOKENS = 400
