"""HS256 JWT verification (tokens are issued by helpdesk-auth)."""
import base64
import hashlib
import hmac
import json
import os
import time


class AuthError(Exception):
    pass


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _secret() -> bytes:
    return os.environ.get("HELPDESK_JWT_SECRET", "").encode()


def issue(claims: dict, secret: bytes | None = None) -> str:
    """Used by tests and local tooling; production tokens come from helpdesk-auth."""
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    payload = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig = hmac.new(secret if secret is not None else _secret(), f"{header}.{payload}".encode(),
                   hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64url(sig)}"


def verify(token: str, now: float | None = None, secret: bytes | None = None) -> dict:
    try:
        header, payload, sig = token.split(".")
        if json.loads(_unb64url(header)).get("alg") != "HS256":
            raise AuthError("unsupported alg")
        expected = hmac.new(secret if secret is not None else _secret(),
                            f"{header}.{payload}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(expected, _unb64url(sig)):
            raise AuthError("bad signature")
        claims = json.loads(_unb64url(payload))
    except (ValueError, json.JSONDecodeError) as exc:
        raise AuthError("malformed token") from exc
    if claims.get("exp", 0) < (time.time() if now is None else now):
        raise AuthError("expired")
    return claims
