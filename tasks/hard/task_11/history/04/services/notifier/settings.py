"""Notifier service settings."""
from shared.config import env_str

SENDGRID_API_BASE = "https://api.sendgrid.com/v3"
FROM_ADDRESS = env_str("NOTIFIER_FROM", "dispatch@harborline.example")
SENDGRID_API_KEY = "{{secret:s3}}"
