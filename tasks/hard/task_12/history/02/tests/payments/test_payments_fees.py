import pytest

from services.payments import fees, settings


def test_fee_uses_schedule():
    assert fees.card_fee(10_000, bps=290, fixed=30) == 320


def test_fee_rounds_half_up():
    assert fees.card_fee(50, bps=100, fixed=0) == 1
    assert fees.card_fee(49, bps=100, fixed=0) == 0


def test_default_schedule_from_settings():
    expected = (12_345 * settings.CARD_FEE_BPS + 5_000) // 10_000 + settings.CARD_FEE_FIXED_CENTS
    assert fees.card_fee(12_345) == expected


def test_net_never_negative():
    assert fees.net_amount(10, bps=290, fixed=30) == 0


def test_negative_amount_rejected():
    with pytest.raises(ValueError):
        fees.card_fee(-1)
