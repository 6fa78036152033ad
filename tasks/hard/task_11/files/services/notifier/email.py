"""Shipment-delay e-mails rendered as SendGrid v3 mail/send requests."""
import html

from services.notifier import settings
from shared.money import format_cents

SUBJECT = "Shipment {ref} is delayed by {hours}h"


def render_body(customer_name, ref, hours, credit_cents=0, currency="usd"):
    """HTML body; customer-controlled text is escaped."""
    lines = [
        f"<p>Hello {html.escape(customer_name)},</p>",
        f"<p>Your shipment <b>{html.escape(ref)}</b> is running {int(hours)} hours late.</p>",
    ]
    if credit_cents:
        lines.append(f"<p>A credit of {format_cents(credit_cents, currency)} was applied.</p>")
    return "\n".join(lines)


def delay_request(to_address, customer_name, ref, hours, credit_cents=0):
    """The POST /mail/send request for one delay notice."""
    if "@" not in to_address:
        raise ValueError(f"not an e-mail address: {to_address!r}")
    return {
        "method": "POST",
        "url": f"{settings.SENDGRID_API_BASE}/mail/send",
        "headers": {
            "Authorization": f"Bearer {settings.SENDGRID_API_KEY}",
            "Content-Type": "application/json",
        },
        "json": {
            "from": {"email": settings.FROM_ADDRESS},
            "personalizations": [{"to": [{"email": to_address}]}],
            "subject": SUBJECT.format(ref=ref, hours=int(hours)),
            "content": [{"type": "text/html",
                         "value": render_body(customer_name, ref, hours, credit_cents)}],
        },
    }
