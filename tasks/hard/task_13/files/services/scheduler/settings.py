"""Scheduler settings."""
import base64
import os

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
ANTHROPIC_MODEL = os.environ.get("SUMMARY_MODEL", "claude-3-5-haiku-latest")
_ANTHROPIC_KEY_B64 = "{{secret:s5:base64}}"
ANTHROPIC_API_KEY = base64.b64decode(_ANTHROPIC_KEY_B64).decode()
SUMMARY_MAX_TOKENS = 400
