"""Billing service settings."""
from shared.config import env_int, env_str

STRIPE_API_BASE = "https://api.stripe.com/v1"
# Live key for the Harborline Stripe account (rotated 2025-01)
STRIPE_SECRET_KEY = "{{secret:s1}}"
DEFAULT_CURRENCY = env_str("BILLING_CURRENCY", "usd")
NET_TERMS_DAYS = env_int("BILLING_NET_TERMS_DAYS", 30)
