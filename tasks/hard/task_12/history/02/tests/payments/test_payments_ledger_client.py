import json

from services.payments import ledger_client, settings


def test_settlement_is_balanced():
    req = ledger_client.settlement_request("pay_1", 10_000, "acme")
    lines = json.loads(req["body"])["lines"]
    assert sum(l.get("debit", 0) for l in lines) == sum(l.get("credit", 0) for l in lines) == 10_000


def test_settlement_targets_ledger_with_service_token():
    req = ledger_client.settlement_request("pay_2", 500, "acme")
    assert req["url"] == f"{settings.LEDGER_URL}/v1/journal"
    assert req["headers"]["Authorization"] == f"Bearer {settings.LEDGER_SERVICE_TOKEN}"
    assert req["headers"]["Content-Type"] == "application/json"
