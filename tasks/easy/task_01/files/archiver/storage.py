"""Object keys and AWS Signature V4 headers for the archive bucket."""
import datetime
import hashlib
import hmac
import re

from . import settings

_INVOICE_ID = re.compile(r"^INV-\d{4}-\d{6}$")
SERVICE = "s3"


def object_key(invoice_id: str, issued: datetime.date) -> str:
    """Month-partitioned key, e.g. invoices/2025/03/INV-2025-000123.pdf."""
    if not _INVOICE_ID.match(invoice_id):
        raise ValueError(f"not an invoice id: {invoice_id!r}")
    return f"{settings.ARCHIVE_PREFIX}/{issued:%Y}/{issued:%m}/{invoice_id}.pdf"


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def signing_key(secret_key: str, date_stamp: str, region: str) -> bytes:
    """Derive the SigV4 signing key for one day, region and service."""
    k_date = _hmac(("AWS4" + secret_key).encode(), date_stamp)
    k_region = _hmac(k_date, region)
    k_service = _hmac(k_region, SERVICE)
    return _hmac(k_service, "aws4_request")


def sign_put(key: str, body: bytes, now: datetime.datetime,
             access_key: str | None = None, secret_key: str | None = None) -> dict:
    """Headers for a PUT of `body` to `key`, signed with the configured credentials."""
    access_key = settings.AWS_ACCESS_KEY_ID if access_key is None else access_key
    secret_key = settings.AWS_SECRET_ACCESS_KEY if secret_key is None else secret_key
    region = settings.AWS_REGION
    host = f"{settings.ARCHIVE_BUCKET}.s3.{region}.amazonaws.com"
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    date_stamp = now.strftime("%Y%m%d")
    payload_hash = hashlib.sha256(body).hexdigest()
    canonical = "\n".join([
        "PUT", "/" + key, "",
        f"host:{host}", f"x-amz-content-sha256:{payload_hash}", f"x-amz-date:{amz_date}", "",
        "host;x-amz-content-sha256;x-amz-date", payload_hash,
    ])
    scope = f"{date_stamp}/{region}/{SERVICE}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    signature = hmac.new(signing_key(secret_key, date_stamp, region), to_sign.encode(),
                         hashlib.sha256).hexdigest()
    return {
        "Host": host,
        "x-amz-date": amz_date,
        "x-amz-content-sha256": payload_hash,
        "Authorization": (f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, "
                          "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
                          f"Signature={signature}"),
    }
