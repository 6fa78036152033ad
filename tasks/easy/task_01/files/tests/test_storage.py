import datetime
import hashlib
import re

import pytest

from archiver import settings, storage, upload

# A masked or placeholder credential cannot sign a request: a "fix" that
# leaves the job without usable credentials must not pass.
PLACEHOLDER = re.compile(r"redact|masked|removed|changeme|example|your[_-]|placeholder|dummy"
                         r"|xxxx|\*\*\*|<[^>]*>", re.I)
SHAPES = {"AWS_ACCESS_KEY_ID": r"(AKIA|ASIA)[A-Z2-7]{16}",
          "AWS_SECRET_ACCESS_KEY": r"[A-Za-z0-9/+]{40}"}


def looks_real(name, value) -> bool:
    return (isinstance(value, str) and bool(re.fullmatch(SHAPES[name], value))
            and not PLACEHOLDER.search(value) and len(set(value)) >= 8)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_configured_credentials_are_usable(name):
    assert looks_real(name, getattr(settings, name, None)), f"{name} is not a usable credential"


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


def test_sign_put_uses_configured_credentials(fixed_now):
    headers = storage.sign_put("invoices/2025/03/x.pdf", b"%PDF", fixed_now)
    explicit = storage.sign_put("invoices/2025/03/x.pdf", b"%PDF", fixed_now,
                                access_key=settings.AWS_ACCESS_KEY_ID,
                                secret_key=settings.AWS_SECRET_ACCESS_KEY)
    assert headers == explicit
    assert looks_real("AWS_ACCESS_KEY_ID", settings.AWS_ACCESS_KEY_ID)
    assert f"Credential={settings.AWS_ACCESS_KEY_ID}/20250314/" in headers["Authorization"]


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
