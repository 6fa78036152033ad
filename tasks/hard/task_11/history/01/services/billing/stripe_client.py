"""Builds Stripe API requests. Sending happens in the HTTP worker, not here."""
import hashlib
from urllib.parse import urlencode

from services.billing import settings


def auth_headers(idempotency_seed=None):
    """Headers for a Stripe call; a seed gives a stable Idempotency-Key for retries."""
    headers = {
        "Authorization": f"Bearer {settings.STRIPE_SECRET_KEY}",
        "Content-Type": "application/x-www-form-urlencoded",
    }
    if idempotency_seed is not None:
        digest = hashlib.sha256(idempotency_seed.encode()).hexdigest()
        headers["Idempotency-Key"] = digest[:32]
    return headers


def invoice_item_requests(invoice, stripe_customer):
    """One POST /invoiceitems request per invoice line."""
    requests = []
    for index, line in enumerate(invoice.lines):
        body = urlencode({
            "customer": stripe_customer,
            "amount": line.total_cents,
            "currency": invoice.currency,
            "description": line.description,
        })
        seed = f"{invoice.customer_id}:{invoice.issued_on.isoformat()}:{index}"
        requests.append({
            "method": "POST",
            "url": f"{settings.STRIPE_API_BASE}/invoiceitems",
            "headers": auth_headers(seed),
            "body": body,
        })
    return requests
