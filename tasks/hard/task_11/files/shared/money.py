"""Integer-cents money helpers shared by billing and notifier."""
from decimal import ROUND_HALF_UP, Decimal

_SYMBOLS = {"usd": "$", "eur": "\u20ac", "gbp": "\u00a3"}


def to_cents(amount):
    """Convert a decimal amount (str, int or float) to integer cents, rounding half up."""
    return int((Decimal(str(amount)) * 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def format_cents(cents, currency="usd"):
    """Render integer cents for humans, e.g. 123456 -> "$1,234.56"."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    symbol = _SYMBOLS.get(currency.lower(), currency.upper() + " ")
    return f"{sign}{symbol}{cents // 100:,}.{cents % 100:02d}"
