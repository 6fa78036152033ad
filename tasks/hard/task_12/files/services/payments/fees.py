"""Card processing fees: basis points plus a fixed amount, in integer cents."""
from services.payments import settings


def card_fee(amount_cents, bps=None, fixed=None):
    """Fee for a card payment of `amount_cents`, rounded half up to the cent."""
    if amount_cents < 0:
        raise ValueError("amount must be non-negative")
    bps = settings.CARD_FEE_BPS if bps is None else bps
    fixed = settings.CARD_FEE_FIXED_CENTS if fixed is None else fixed
    return (amount_cents * bps + 5_000) // 10_000 + fixed


def net_amount(amount_cents, **kw):
    """What the merchant receives after the fee (never below zero)."""
    return max(0, amount_cents - card_fee(amount_cents, **kw))
