import secrets

import pytest

from services.webhooks import signing


@pytest.fixture
def key():
    return secrets.token_hex(16)


def test_round_trip(key):
    header = signing.sign(b'{"id": 1}', key, 1_700_000_000)
    assert signing.verify(b'{"id": 1}', header, key, now=1_700_000_100) == 1_700_000_000


def test_tampered_payload_rejected(key):
    header = signing.sign(b'{"id": 1}', key, 1_700_000_000)
    with pytest.raises(signing.SignatureError, match="mismatch"):
        signing.verify(b'{"id": 2}', header, key, now=1_700_000_000)


def test_stale_timestamp_rejected(key):
    header = signing.sign(b"x", key, 1_700_000_000)
    with pytest.raises(signing.SignatureError, match="tolerance"):
        signing.verify(b"x", header, key, now=1_700_000_000 + 301)


def test_malformed_header_rejected(key):
    with pytest.raises(signing.SignatureError, match="malformed"):
        signing.verify(b"x", "v1=abc", key, now=0)
