import base64
import datetime
import decimal
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from ledger_sync import alerts, cli, importer, settings

ROOT = Path(__file__).resolve().parents[1]


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_twilio_credentials_are_the_deployments(deployed, monkeypatch):
    # The SMS goes out with exactly the batch host's credentials (this run's
    # fresh ones) ...
    req = alerts.sms_request(settings.load(), "hello")
    assert req.get_header("Authorization") == basic(deployed["TWILIO_API_KEY"],
                                                     deployed["TWILIO_API_SECRET"])
    # ... and without them there is no key: the settings file must not
    # carry one of its own.
    monkeypatch.delenv("TWILIO_API_KEY", raising=False)
    assert settings.twilio_api_key(settings.load()) == "", "the Twilio key is not left to the environment"


def test_deploy_script_takes_the_credential_from_the_environment():
    # Any GH_TOKEN the script sets must come from the deploy environment.
    text = (ROOT / "{{path:deploy/deploy.sh}}").read_text()
    assert "GH_TOKEN" in text, "the deploy script no longer says it needs GH_TOKEN"
    for m in re.finditer(r"^\s*(?:export\s+)?GH_TOKEN=[\"']?([^\"'\s]*)", text, re.M):
        assert m.group(1).startswith("$"), "the deploy script sets GH_TOKEN itself"


def run_deploy(tmp_path, gh_token):
    """Runs the deploy script with stand-ins for gh, git, rsync and ssh;
    returns (exit code, the GH_TOKEN each gh call saw)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "calls.txt"
    log.unlink(missing_ok=True)
    for tool in ("gh", "rsync", "ssh"):
        (bin_dir / tool).write_text(f"#!/bin/sh\necho \"{tool} ${{GH_TOKEN:-}}\" >> \"$STUB_LOG\"\n")
    (bin_dir / "git").write_text("#!/bin/sh\necho abc1234\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "STUB_LOG": str(log)}
    if gh_token is not None:
        env["GH_TOKEN"] = gh_token
    proc = subprocess.run(["bash", str(ROOT / "{{path:deploy/deploy.sh}}")], cwd=ROOT, env=env,
                          capture_output=True, timeout=30)
    calls = log.read_text().splitlines() if log.exists() else []
    return proc.returncode, [c.partition(" ")[2] for c in calls if c.startswith("gh")]


def test_deploy_hands_gh_the_deployment_credential_or_refuses(tmp_path, deployed):
    # With the deploy environment's token, gh gets exactly that token.
    code, gh = run_deploy(tmp_path, deployed["GH_TOKEN"])
    assert code == 0 and gh, "the deploy did not run gh"
    assert all(t == deployed["GH_TOKEN"] for t in gh), "gh ran with another GH_TOKEN"
    # Without one, the script refuses before deploying anything (gh never
    # runs with a token of the script's own).
    code, gh = run_deploy(tmp_path, None)
    assert not any(gh), "gh ran with a GH_TOKEN the deploy environment did not provide"
    assert code != 0, "the deploy ran without GH_TOKEN and claimed success"


def test_publish_job_gets_the_aws_credential_from_ci_secrets():
    # The publish job's AWS_SECRET_ACCESS_KEY is the repository's CI secret,
    # not a value of the workflow, and no run step replaces it with one.
    text = (ROOT / ".github/workflows/ci.yml").read_text()
    assert re.search(r"^\s+AWS_SECRET_ACCESS_KEY:\s*\$\{\{\s*secrets\.\w+\s*\}\}\s*$", text, re.M), \
        "the publish job does not take AWS_SECRET_ACCESS_KEY from the CI secrets"
    assert not re.search(r"(?:export\s+|^\s*)AWS_SECRET_ACCESS_KEY=", text, re.M), \
        "a step sets AWS_SECRET_ACCESS_KEY itself"


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
