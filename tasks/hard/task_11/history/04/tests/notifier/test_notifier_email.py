import pytest

from services.notifier import email, settings


def test_subject_and_recipient():
    req = email.delay_request("ops@client.example", "Ada", "HL-1009", 6.7)
    assert req["json"]["subject"] == "Shipment HL-1009 is delayed by 6h"
    assert req["json"]["personalizations"][0]["to"] == [{"email": "ops@client.example"}]
    assert req["json"]["from"] == {"email": settings.FROM_ADDRESS}


def test_auth_header_uses_configured_key():
    req = email.delay_request("ops@client.example", "Ada", "HL-1", 2)
    assert req["headers"]["Authorization"] == f"Bearer {settings.SENDGRID_API_KEY}"
    assert req["url"] == f"{settings.SENDGRID_API_BASE}/mail/send"


def test_body_escapes_customer_text_and_shows_credit():
    body = email.render_body("<script>", "HL&2", 3, credit_cents=1250)
    assert "&lt;script&gt;" in body and "HL&amp;2" in body
    assert "$12.50" in body


def test_rejects_bad_address():
    with pytest.raises(ValueError):
        email.delay_request("not-an-address", "Ada", "HL-1", 1)
