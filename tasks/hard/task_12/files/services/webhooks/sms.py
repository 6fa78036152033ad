"""SMS payment receipts through the Twilio Messages API."""
import base64
from urllib.parse import urlencode

from services.webhooks import settings


def basic_auth(user, password):
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return f"Basic {token}"


def receipt_text(merchant, amount_cents):
    return f"{merchant}: payment of ${amount_cents // 100}.{amount_cents % 100:02d} received. Thank you!"


def receipt_request(to_number, merchant, amount_cents):
    if not to_number.startswith("+") or not to_number[1:].isdigit():
        raise ValueError("phone numbers must be E.164")
    url = (f"https://api.twilio.com/2010-04-01/Accounts/"
           f"{settings.TWILIO_ACCOUNT_SID}/Messages.json")
    body = urlencode({"To": to_number, "From": settings.SMS_FROM,
                      "Body": receipt_text(merchant, amount_cents)})
    headers = {"Authorization": basic_auth(settings.TWILIO_API_KEY, settings.TWILIO_API_SECRET),
               "Content-Type": "application/x-www-form-urlencoded"}
    return {"method": "POST", "url": url, "headers": headers, "body": body}
