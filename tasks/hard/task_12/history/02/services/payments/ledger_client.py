"""Builds the request that records a settled payment in the ledger service."""
from services.payments import fees, settings
from shared.http import bearer, build_request


def settlement_request(payment_id, amount_cents, merchant):
    """Journal a settled card payment: cash, fee expense and merchant payable."""
    fee = fees.card_fee(amount_cents)
    body = {
        "reference": payment_id,
        "lines": [
            {"account": "cash", "debit": amount_cents - fee},
            {"account": "fees:card", "debit": fee},
            {"account": f"payable:{merchant}", "credit": amount_cents},
        ],
    }
    return build_request("POST", f"{settings.LEDGER_URL}/v1/journal",
                         bearer(settings.LEDGER_SERVICE_TOKEN), body)
