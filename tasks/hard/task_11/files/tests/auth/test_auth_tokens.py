import secrets

import pytest

from services.auth import settings, tokens


@pytest.fixture
def key():
    return secrets.token_hex(16)


def test_round_trip(key):
    tok = tokens.issue("user-9", key, now=1_000, ttl=60)
    payload = tokens.verify(tok, key, now=1_030)
    assert payload["sub"] == "user-9" and payload["iss"] == settings.ISSUER


def test_expired_token_rejected(key):
    tok = tokens.issue("user-9", key, now=1_000, ttl=60)
    with pytest.raises(tokens.TokenError, match="expired"):
        tokens.verify(tok, key, now=1_060)


def test_wrong_key_rejected(key):
    tok = tokens.issue("user-9", key, now=1_000, ttl=60)
    with pytest.raises(tokens.TokenError, match="signature"):
        tokens.verify(tok, key + "x", now=1_001)


def test_malformed_token_rejected(key):
    with pytest.raises(tokens.TokenError, match="malformed"):
        tokens.verify("no-dot-here", key)


def test_missing_key_refuses_to_sign():
    with pytest.raises(tokens.TokenError):
        tokens.issue("user-9", "")
