"""HMAC-SHA256 signed session tokens: base64url(payload) + "." + base64url(mac)."""
import base64
import hashlib
import hmac
import json
import time

from services.auth import settings


class TokenError(Exception):
    """The token is malformed, forged or expired."""


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def issue(subject, key, now=None, ttl=None):
    """Sign a token for `subject` valid for `ttl` seconds (default from settings)."""
    if not key:
        raise TokenError("no signing key configured")
    now = int(time.time() if now is None else now)
    ttl = settings.SESSION_TTL_SECONDS if ttl is None else ttl
    payload = {"sub": subject, "iss": settings.ISSUER, "iat": now, "exp": now + ttl}
    body = _b64(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode())
    mac = hmac.new(key.encode(), body.encode(), hashlib.sha256).digest()
    return f"{body}.{_b64(mac)}"


def verify(token, key, now=None):
    """Return the payload of a valid token, raise TokenError otherwise."""
    try:
        body, mac = token.split(".")
    except ValueError:
        raise TokenError("malformed token") from None
    want = hmac.new(key.encode(), body.encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(want, _unb64(mac)):
        raise TokenError("bad signature")
    payload = json.loads(_unb64(body))
    now = int(time.time() if now is None else now)
    if payload["exp"] <= now:
        raise TokenError("expired")
    return payload
