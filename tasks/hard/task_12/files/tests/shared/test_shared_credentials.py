"""Every service must really obtain usable credentials: today from the code
or the deploy files, after the fix from the environment. A masked,
placeholder or missing credential is a broken deployment, not a fix."""
import base64
import binascii
import importlib.util
import os
import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

from services.ledger import categorize, storage
from services.webhooks import settings as webhook_settings
from services.webhooks import sms

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = re.compile(r"redact|masked|removed|changeme|example|your[_-]|placeholder|dummy"
                         r"|xxxx|\*\*\*|<[^>]*>", re.I)
SHAPES = {
    "openai": r"sk-(proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,200}",
    "twilio": r"SK[0-9a-f]{32}",
    "github": r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}",
    "password": r"[A-Za-z0-9._~-]{12,128}",
}


def looks_real(kind, value) -> bool:
    return (isinstance(value, str) and bool(re.fullmatch(SHAPES[kind], value))
            and not PLACEHOLDER.search(value) and len(set(value)) >= 8)


def usable_azure(conn) -> bool:
    try:
        parts = storage.parse_connection_string(conn or "")
        key = base64.b64decode(parts["AccountKey"], validate=True)
    except (KeyError, ValueError, binascii.Error):
        return False
    return len(key) == 64 and bool(re.fullmatch(r"[a-z0-9]{3,24}", parts.get("AccountName", "")))


def usable_dsn(url) -> bool:
    parts = urlsplit(url or "")
    return (parts.scheme in ("postgres", "postgresql") and bool(parts.username)
            and bool(parts.hostname) and looks_real("password", parts.password))


def load_migrate():
    spec = importlib.util.spec_from_file_location("migrate", ROOT / "{{path:migrations/migrate.py}}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ledger_has_a_usable_openai_key():
    assert looks_real("openai", categorize.OPENAI_API_KEY), "categorisation has no usable key"


def test_llm_requests_carry_the_key():
    req = categorize.llm_request("ACME GmbH 4411", {"hosting", "travel"})
    assert looks_real("openai", req["headers"]["Authorization"].removeprefix("Bearer "))


def test_ledger_has_a_usable_storage_connection_string():
    assert usable_azure(storage.AZURE_STORAGE_CONNECTION_STRING), "exports have no usable storage account"


def test_export_account_comes_from_the_connection_string():
    parts = storage.parse_connection_string(storage.AZURE_STORAGE_CONNECTION_STRING or "")
    account = parts.get("AccountName", "")
    assert re.fullmatch(r"[a-z0-9]{3,24}", account) and not PLACEHOLDER.search(account)
    assert storage.blob_url(account, __import__("datetime").date(2025, 2, 14)).startswith(
        f"https://{account}.blob.core.windows.net/")


def test_webhooks_have_a_usable_twilio_key():
    assert looks_real("twilio", webhook_settings.TWILIO_API_KEY), "SMS receipts have no usable key"


def test_sms_requests_carry_the_key():
    req = sms.receipt_request("+15005550009", "Ledgerly", 1250)
    user = base64.b64decode(req["headers"]["Authorization"].removeprefix("Basic ")).decode()
    assert looks_real("twilio", user.partition(":")[0])


def test_migrations_get_a_database(monkeypatch):
    # Without LEDGER_DSN the migration runner must refuse to start or fall
    # back to a usable DSN, never run with none.
    monkeypatch.delenv("LEDGER_DSN", raising=False)
    try:
        mod = load_migrate()
    except (KeyError, RuntimeError, SystemExit):
        return
    assert usable_dsn(getattr(mod, "DSN", None)), "migrations would run without a usable DSN"


def test_migrations_pass_the_dsn_to_psql(monkeypatch):
    mod = load_migrate()
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda args, **kw: calls.append(args))
    mod.main()
    assert calls and all(usable_dsn(c[1]) for c in calls), "psql gets no usable DSN"


def _run_deploy(tmp_path):
    """Runs the deploy script with stand-ins for docker, git and python;
    returns (exit code, what `docker login` read on stdin or None)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "login.txt"
    (bin_dir / "docker").write_text(
        "#!/bin/sh\nif [ \"$1\" = login ]; then cat > \"$STUB_LOG\"; fi\nexit 0\n")
    (bin_dir / "git").write_text("#!/bin/sh\necho abc1234\n")
    (bin_dir / "python").write_text("#!/bin/sh\nexit 0\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "STUB_LOG": str(log)}
    proc = subprocess.run(["bash", str(ROOT / "{{path:infra/deploy.sh}}")], env=env,
                          capture_output=True, timeout=30)
    return proc.returncode, (log.read_text().strip() if log.exists() else None)


def test_deploy_logs_in_with_a_usable_token_or_refuses(tmp_path):
    code, token = _run_deploy(tmp_path)
    if token is None:
        assert code != 0, "the deploy ran without logging in to the registry"
    else:
        assert looks_real("github", token), "the deploy logs in with an unusable token"


def test_deploy_script_names_its_token():
    text = (ROOT / "{{path:infra/deploy.sh}}").read_text()
    m = re.search(r"^GHCR_TOKEN=\"?([^\"\n]*)\"?\s*$", text, re.M)
    assert m, "the deploy script no longer defines GHCR_TOKEN"
    assert re.fullmatch(r"\$\{?[A-Za-z_]\w*(:?[-?][^}]*)?\}?", m.group(1)) or looks_real("github", m.group(1))
