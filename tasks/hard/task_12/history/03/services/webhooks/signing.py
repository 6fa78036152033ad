"""Verify `t=<unix>,v1=<hex hmac>` signature headers on inbound webhooks."""
import hashlib
import hmac

TOLERANCE_SECONDS = 300


class SignatureError(Exception):
    pass


def sign(payload, secret, timestamp):
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + payload, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def verify(payload, header, secret, now):
    """Raise SignatureError unless `header` signs `payload` within the tolerance."""
    try:
        fields = dict(item.split("=", 1) for item in header.split(","))
        timestamp = int(fields["t"])
        given = fields["v1"]
    except (KeyError, ValueError):
        raise SignatureError("malformed signature header") from None
    if abs(now - timestamp) > TOLERANCE_SECONDS:
        raise SignatureError("timestamp outside tolerance")
    want = sign(payload, secret, timestamp).split("v1=", 1)[1]
    if not hmac.compare_digest(want, given):
        raise SignatureError("signature mismatch")
    return timestamp
