import base64
from urllib.parse import parse_qs

import pytest

from services.webhooks import alerts, settings, sms


def test_receipt_request_uses_configured_credentials():
    req = sms.receipt_request("+14155550100", "Acme", 12_345)
    user_pass = base64.b64decode(req["headers"]["Authorization"].split()[1]).decode()
    assert user_pass == f"{settings.TWILIO_API_KEY}:{settings.TWILIO_API_SECRET}"
    assert parse_qs(req["body"])["Body"] == ["Acme: payment of $123.45 received. Thank you!"]


def test_receipt_rejects_non_e164():
    with pytest.raises(ValueError):
        sms.receipt_request("0155 555", "Acme", 1)


def test_alert_payload_truncates():
    payload = alerts.alert_payload("stripe", "evt_1", "x" * 5000)
    assert len(payload["text"]) == 3000 and "*stripe*" in payload["text"]
