from datetime import date, timedelta

import pytest

from services.billing import settings
from services.billing.invoices import Invoice


def make_invoice(**kw):
    inv = Invoice(customer_id="cus-42", issued_on=date(2025, 1, 31), **kw)
    inv.add("Pallet, Rotterdam to Hamburg", 3, "120.50").add("Fuel surcharge", 1, "18.25")
    return inv


def test_subtotal_sums_lines_in_cents():
    assert make_invoice().subtotal_cents == 3 * 12050 + 1825


def test_tax_rounds_half_up():
    inv = make_invoice(tax_rate="0.19")
    assert inv.tax_cents == 7215
    assert inv.total_cents == inv.subtotal_cents + 7215


def test_zero_quantity_rejected():
    with pytest.raises(ValueError):
        Invoice("cus-1", date(2025, 1, 1)).add("nothing", 0, "1.00")


def test_due_date_uses_net_terms():
    inv = make_invoice()
    assert inv.due_on == date(2025, 1, 31) + timedelta(days=settings.NET_TERMS_DAYS)


def test_default_currency_comes_from_settings():
    assert make_invoice().currency == settings.DEFAULT_CURRENCY
