from shared.money import format_cents, to_cents


def test_to_cents_rounds_half_up():
    assert to_cents("10.005") == 1001
    assert to_cents(3) == 300


def test_format_cents_groups_thousands():
    assert format_cents(123456) == "$1,234.56"


def test_format_cents_negative_and_unknown_currency():
    assert format_cents(-5, "usd") == "-$0.05"
    assert format_cents(250, "chf") == "CHF 2.50"
