"""Invoice assembly for freight shipments."""
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

from services.billing import settings
from shared.money import to_cents


@dataclass
class LineItem:
    description: str
    quantity: int
    unit_price_cents: int

    @property
    def total_cents(self):
        return self.quantity * self.unit_price_cents


@dataclass
class Invoice:
    customer_id: str
    issued_on: date
    tax_rate: str = "0"
    currency: str = settings.DEFAULT_CURRENCY
    lines: list = field(default_factory=list)

    def add(self, description, quantity, unit_price):
        """Append a line; `unit_price` is a decimal amount in the invoice currency."""
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self.lines.append(LineItem(description, quantity, to_cents(unit_price)))
        return self

    @property
    def subtotal_cents(self):
        return sum(line.total_cents for line in self.lines)

    @property
    def tax_cents(self):
        tax = Decimal(self.subtotal_cents) * Decimal(self.tax_rate)
        return int(tax.quantize(Decimal("1"), rounding=ROUND_HALF_UP))

    @property
    def total_cents(self):
        return self.subtotal_cents + self.tax_cents

    @property
    def due_on(self):
        return self.issued_on + timedelta(days=settings.NET_TERMS_DAYS)
