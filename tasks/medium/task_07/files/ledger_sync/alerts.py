"""SMS alerts for unusually large transactions (Twilio REST API)."""
import base64
import urllib.parse
import urllib.request

from . import settings


def large(entries, threshold):
    return [e for e in entries if abs(e.amount) >= threshold]


def sms_request(cp, body: str) -> urllib.request.Request:
    sid = cp.get("twilio", "account_sid")
    key = settings.twilio_api_key(cp)
    secret = __import__("os").environ.get("TWILIO_API_SECRET", "")
    auth = base64.b64encode(f"{key}:{secret}".encode()).decode()
    data = urllib.parse.urlencode({"From": cp.get("twilio", "from_number"),
                                   "To": cp.get("twilio", "to_number"), "Body": body[:320]})
    return urllib.request.Request(
        f"https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json",
        data=data.encode(), method="POST", headers={"Authorization": f"Basic {auth}"})
