"""Scheduler settings."""
import os

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
ANTHROPIC_MODEL = os.environ.get("SUMMARY_MODEL", "claude-3-5-haiku-latest")
ANTHROPIC_API_KEY = "{{secret:s5}}"
SUMMARY_MAX_TOKENS = 400
