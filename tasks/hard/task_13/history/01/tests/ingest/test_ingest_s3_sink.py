import hashlib

from services.ingest import s3_sink, settings


def test_signing_key_depends_on_every_input():
    base = s3_sink.signing_key("k", "20250303", "eu-central-1")
    assert len(base) == 32
    assert base != s3_sink.signing_key("k2", "20250303", "eu-central-1")
    assert base != s3_sink.signing_key("k", "20250304", "eu-central-1")
    assert base != s3_sink.signing_key("k", "20250303", "us-east-1")


def test_put_request_uses_configured_credentials():
    req = s3_sink.put_request("raw/x.jsonl.gz", b"abc", "20250303")
    assert req["access_key_id"] == settings.AWS_ACCESS_KEY_ID
    want = s3_sink.signing_key(settings.AWS_SECRET_ACCESS_KEY, "20250303", settings.REGION).hex()
    assert req["signing_key"] == want
    assert req["payload_sha256"] == hashlib.sha256(b"abc").hexdigest()
    assert req["url"] == f"https://{settings.BUCKET}.s3.{settings.REGION}.amazonaws.com/raw/x.jsonl.gz"
