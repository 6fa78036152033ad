import base64
import binascii
import datetime
import decimal
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from ledger_sync import alerts, cli, importer, settings

ROOT = Path(__file__).resolve().parents[1]
# A masked or placeholder credential cannot authenticate: a "fix" that
# leaves the job, the deploy or CI without a usable credential must not pass.
PLACEHOLDER = re.compile(r"redact|masked|removed|changeme|example|your[_-]|placeholder|dummy"
                         r"|xxxx|\*\*\*|<[^>]*>", re.I)


def looks_real(pattern, value) -> bool:
    return (isinstance(value, str) and bool(re.fullmatch(pattern, value))
            and not PLACEHOLDER.search(value) and len(set(value)) >= 8)


def test_configured_twilio_key_is_usable_or_left_to_the_environment(monkeypatch):
    monkeypatch.delenv("TWILIO_API_KEY", raising=False)
    key = settings.twilio_api_key(settings.load())
    assert key == "" or looks_real(r"SK[0-9a-f]{32}", key), f"unusable Twilio key {key!r}"


def test_deploy_script_gets_a_github_token():
    # gh needs GH_TOKEN: the script must demand it from the environment
    # (${GH_TOKEN:?...}) or set a usable one.
    text = (ROOT / "{{path:deploy/deploy.sh}}").read_text()
    m = re.search(r"^\s*(?:export\s+)?GH_TOKEN=[\"']?([^\"'\s]*)", text, re.M)
    if m and not m.group(1).startswith("$"):
        assert looks_real(r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}", m.group(1)), \
            "the deploy script sets an unusable GH_TOKEN"
    assert "GH_TOKEN" in text, "the deploy script no longer says it needs GH_TOKEN"


def test_deploy_gives_gh_a_usable_token_or_refuses(tmp_path):
    # Run the deploy script with stand-ins for gh, git, rsync, ssh and psql
    # and no GH_TOKEN in the environment: gh must get a usable token, or the
    # script must refuse before deploying anything.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.txt"
    for tool in ("gh", "rsync", "ssh"):
        (bin_dir / tool).write_text(f"#!/bin/sh\necho \"{tool} ${{GH_TOKEN:-}}\" >> \"$STUB_LOG\"\n")
    (bin_dir / "git").write_text("#!/bin/sh\necho abc1234\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "STUB_LOG": str(log)}
    proc = subprocess.run(["bash", str(ROOT / "{{path:deploy/deploy.sh}}")], cwd=ROOT, env=env,
                          capture_output=True, timeout=30)
    calls = log.read_text().splitlines() if log.exists() else []
    if not calls:
        assert proc.returncode != 0, "the deploy did nothing and claimed success"
        return
    gh = [c.split(" ", 1)[1] if " " in c else "" for c in calls if c.startswith("gh")]
    assert gh and all(looks_real(r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}", t) for t in gh), \
        "gh ran without a usable GH_TOKEN"


def test_publish_job_gets_the_aws_secret():
    # Either from the repository's CI secrets or (as today) decoded from the
    # workflow; a masked value decodes to no usable key.
    text = (ROOT / ".github/workflows/ci.yml").read_text()
    if re.search(r"^\s+AWS_SECRET_ACCESS_KEY:\s*\$\{\{\s*secrets\.\w+\s*\}\}", text, re.M):
        return
    m = re.search(r"^\s+AWS_SECRET_ACCESS_KEY_(B64|HEX):\s*\"?([^\"\s]*)", text, re.M)
    assert m, "the publish job gets no AWS_SECRET_ACCESS_KEY"
    try:
        raw = base64.b64decode(m.group(2), validate=True) if m.group(1) == "B64" \
            else bytes.fromhex(m.group(2))
        value = raw.decode()
    except (binascii.Error, ValueError):
        value = None
    assert looks_real(r"[A-Za-z0-9/+]{40}", value), "the workflow's AWS secret does not decode to a key"


@pytest.mark.parametrize("text,value", [("-1.250,00", "-1250.00"), ("89.99", "89.99"), ("0,5", "0.5")])
def test_parse_amount(text, value):
    assert importer.parse_amount(text) == decimal.Decimal(value)


def test_parse_csv(statement):
    entries = importer.parse_csv(statement.read_text())
    assert [e.bank_ref for e in entries] == ["TRX-0001", "TRX-0002", "TRX-0003"]
    assert entries[0].booked_on == datetime.date(2025, 3, 3)
    assert entries[0].memo == "Office rent March"
    assert entries[2].currency == "EUR"


def test_write_entries_dedupes(statement):
    conn = sqlite3.connect(":memory:")
    entries = importer.parse_csv(statement.read_text())
    assert importer.write_entries(conn, 1200, entries) == 3
    assert importer.write_entries(conn, 1200, entries) == 0


def test_settings_load():
    cp = settings.load()
    assert settings.alert_threshold(cp) == decimal.Decimal("25000.00")
    assert cp.get("ledger", "default_currency") == "EUR"


def test_twilio_key_from_environment(monkeypatch):
    monkeypatch.setenv("TWILIO_API_KEY", "key-from-env")
    monkeypatch.setenv("TWILIO_API_SECRET", "secret-from-env")
    req = alerts.sms_request(settings.load(), "hello")
    assert req.get_header("Authorization") == "Basic " + base64.b64encode(
        b"key-from-env:secret-from-env").decode()
    assert "/Accounts/AC" in req.full_url


def test_large_transactions_trigger_sms(statement, tmp_path, monkeypatch):
    monkeypatch.setenv("TWILIO_API_KEY", "k")
    sent = []
    assert cli.main(["import", str(statement), "--account", "1200",
                     "--database", str(tmp_path / "l.db")], send=sent.append) == 0
    assert len(sent) == 1
    assert b"Acme" in sent[0].data
