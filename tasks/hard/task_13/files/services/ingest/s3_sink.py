"""SigV4 signing-key derivation and PUT descriptions for the S3 sink."""
import hashlib
import hmac

from services.ingest import settings


def _hmac(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def signing_key(secret_key, day, region, service="s3"):
    """AWS SigV4 signing key for `day` (YYYYMMDD)."""
    k = _hmac(("AWS4" + secret_key).encode(), day)
    for part in (region, service, "aws4_request"):
        k = _hmac(k, part)
    return k


def put_request(key, body, day):
    """Everything the uploader needs to sign and send one PUT."""
    return {
        "method": "PUT",
        "url": f"https://{settings.BUCKET}.s3.{settings.REGION}.amazonaws.com/{key}",
        "access_key_id": settings.AWS_ACCESS_KEY_ID,
        "signing_key": signing_key(settings.AWS_SECRET_ACCESS_KEY, day, settings.REGION).hex(),
        "payload_sha256": hashlib.sha256(body).hexdigest(),
    }
