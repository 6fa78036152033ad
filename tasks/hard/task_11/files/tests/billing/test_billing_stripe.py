from datetime import date
from urllib.parse import parse_qs

from services.billing import settings, stripe_client
from services.billing.invoices import Invoice


def test_auth_header_uses_configured_key():
    headers = stripe_client.auth_headers()
    assert headers["Authorization"] == f"Bearer {settings.STRIPE_SECRET_KEY}"
    assert "Idempotency-Key" not in headers


def test_idempotency_key_is_stable():
    a = stripe_client.auth_headers("cus-1:2025-01-01:0")["Idempotency-Key"]
    b = stripe_client.auth_headers("cus-1:2025-01-01:0")["Idempotency-Key"]
    c = stripe_client.auth_headers("cus-1:2025-01-01:1")["Idempotency-Key"]
    assert a == b != c and len(a) == 32


def test_one_request_per_line():
    inv = Invoice("cus-7", date(2025, 2, 3)).add("Container", 2, "900").add("Customs", 1, "45.10")
    reqs = stripe_client.invoice_item_requests(inv, "cus_stripe_7")
    assert [r["url"] for r in reqs] == [f"{settings.STRIPE_API_BASE}/invoiceitems"] * 2
    body = parse_qs(reqs[1]["body"])
    assert body["amount"] == ["4510"] and body["customer"] == ["cus_stripe_7"]
