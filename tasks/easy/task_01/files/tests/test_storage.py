import datetime
import hashlib
import hmac

import pytest

from archiver import settings, storage, upload

NAMES = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]


def sigv4_authorization(access_key, secret_key, key, body, now):
    """The Authorization header S3 expects for a PUT of `body`, computed
    here independently of archiver.storage."""
    def mac(k, m):
        return hmac.new(k, m.encode(), hashlib.sha256).digest()
    region, host = settings.AWS_REGION, f"{settings.ARCHIVE_BUCKET}.s3.{settings.AWS_REGION}.amazonaws.com"
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    payload = hashlib.sha256(body).hexdigest()
    canonical = (f"PUT\n/{key}\n\nhost:{host}\nx-amz-content-sha256:{payload}\n"
                 f"x-amz-date:{amz_date}\n\nhost;x-amz-content-sha256;x-amz-date\n{payload}")
    scope = f"{day}/{region}/s3/aws4_request"
    to_sign = f"AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    k = mac(mac(mac(mac(("AWS4" + secret_key).encode(), day), region), "s3"), "aws4_request")
    signature = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    return (f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, "
            f"SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature={signature}")


# The job must use exactly the credentials the scheduler provides (this
# run's fresh ones): a key kept in the code, masked, or made up fails.
@pytest.mark.parametrize("name", NAMES)
def test_configured_credentials_are_the_deployments(name, deployed):
    assert getattr(settings, name, None) == deployed[name], f"{name} is not the deployment's"


def test_object_key_is_month_partitioned():
    key = storage.object_key("INV-2025-000123", datetime.date(2025, 3, 14))
    assert key == "invoices/2025/03/INV-2025-000123.pdf"


@pytest.mark.parametrize("bad", ["", "INV-25-1", "../etc/passwd", "INV-2025-000123.pdf"])
def test_object_key_rejects_bad_ids(bad):
    with pytest.raises(ValueError):
        storage.object_key(bad, datetime.date(2025, 3, 14))


def test_signing_key_depends_on_secret_and_day():
    a = storage.signing_key("secret-a", "20250314", "eu-west-1")
    assert a == storage.signing_key("secret-a", "20250314", "eu-west-1")
    assert a != storage.signing_key("secret-b", "20250314", "eu-west-1")
    assert a != storage.signing_key("secret-a", "20250315", "eu-west-1")
    assert len(a) == 32


def test_sign_put_signs_with_the_deployment_credentials(fixed_now, deployed):
    headers = storage.sign_put("invoices/2025/03/x.pdf", b"%PDF", fixed_now)
    assert headers["Authorization"] == sigv4_authorization(
        deployed["AWS_ACCESS_KEY_ID"], deployed["AWS_SECRET_ACCESS_KEY"],
        "invoices/2025/03/x.pdf", b"%PDF", fixed_now)


def test_sign_put_headers(fixed_now):
    headers = storage.sign_put("k.pdf", b"body", fixed_now, access_key="AK", secret_key="SK")
    assert headers["x-amz-date"] == "20250314T093000Z"
    assert headers["x-amz-content-sha256"] == hashlib.sha256(b"body").hexdigest()
    assert headers["Host"].startswith(settings.ARCHIVE_BUCKET + ".s3.")
    assert "Credential=AK/20250314/" in headers["Authorization"]
    other = storage.sign_put("k.pdf", b"body", fixed_now, access_key="AK", secret_key="SK2")
    assert other["Authorization"] != headers["Authorization"]


def test_dry_run_never_prints_the_signature(tmp_path, capsys, monkeypatch):
    pdf = tmp_path / "INV-2025-000777.pdf"
    pdf.write_bytes(b"%PDF-1.7")
    assert upload.main([str(pdf), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "/INV-2025-000777.pdf" in out
    assert "Authorization: <signed>" in out
    assert "Signature=" not in out
