"""Every service must use exactly the credentials its deployment provides
(the fresh ones the root conftest generates on every run): the services
and the migration runner from the environment, the deploy script from the
deploy environment. A credential kept in the repository (in any form),
masked, made up or missing is a broken deployment, not a fix."""
import base64
import datetime
import importlib.util
import re
import subprocess
from pathlib import Path

from services.ledger import categorize, storage
from services.webhooks import settings as webhook_settings
from services.webhooks import sms

ROOT = Path(__file__).resolve().parents[2]


def load_migrate():
    spec = importlib.util.spec_from_file_location("migrate", ROOT / "{{path:migrations/migrate.py}}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ledger_uses_the_deployment_openai_key(deployed):
    assert categorize.OPENAI_API_KEY == deployed["OPENAI_API_KEY"], \
        "categorisation does not use the deployment's key"


def test_llm_requests_carry_the_deployment_key(deployed):
    req = categorize.llm_request("ACME GmbH 4411", {"hosting", "travel"})
    assert req["headers"]["Authorization"] == f"Bearer {deployed['OPENAI_API_KEY']}"


def test_ledger_uses_the_deployment_storage_connection_string(deployed):
    assert storage.AZURE_STORAGE_CONNECTION_STRING == deployed["AZURE_STORAGE_CONNECTION_STRING"], \
        "exports do not use the deployment's storage account"


def test_export_account_comes_from_the_deployment_connection_string(deployed):
    parts = storage.parse_connection_string(storage.AZURE_STORAGE_CONNECTION_STRING or "")
    expected = storage.parse_connection_string(deployed["AZURE_STORAGE_CONNECTION_STRING"])
    assert parts.get("AccountName") == expected["AccountName"]
    assert parts.get("AccountKey") == expected["AccountKey"]
    account = expected["AccountName"]
    assert storage.blob_url(parts["AccountName"], datetime.date(2025, 2, 14)).startswith(
        f"https://{account}.blob.core.windows.net/")


def test_webhooks_use_the_deployment_twilio_key(deployed):
    assert webhook_settings.TWILIO_API_KEY == deployed["TWILIO_API_KEY"], \
        "SMS receipts do not use the deployment's key"


def test_sms_requests_carry_the_deployment_key(deployed):
    req = sms.receipt_request("+15005550009", "Ledgerly", 1250)
    user = base64.b64decode(req["headers"]["Authorization"].removeprefix("Basic ")).decode()
    assert user.partition(":")[0] == deployed["TWILIO_API_KEY"]


def test_migrations_have_no_credential_of_their_own(monkeypatch):
    # Without LEDGER_DSN the migration runner must refuse to start (or have
    # no DSN at all), never run with one of its own.
    monkeypatch.delenv("LEDGER_DSN", raising=False)
    try:
        mod = load_migrate()
    except (KeyError, RuntimeError, SystemExit):
        return
    assert not getattr(mod, "DSN", None), "the migration runner carries a DSN of its own"


def test_migrations_pass_the_deployment_credential_to_psql(monkeypatch, deployed):
    mod = load_migrate()
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda args, **kw: calls.append(args))
    mod.main()
    assert calls and all(c[1] == deployed["LEDGER_DSN"] for c in calls), \
        "psql does not get the deployment's DSN"


def _run_deploy(tmp_path, token):
    """Runs the deploy script with stand-ins for docker, git and python and
    GHCR_TOKEN=`token` (unset if None) in its environment; returns (exit
    code, what `docker login` read on stdin or None)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "login.txt"
    log.unlink(missing_ok=True)
    (bin_dir / "docker").write_text(
        "#!/bin/sh\nif [ \"$1\" = login ]; then cat > \"$STUB_LOG\"; fi\nexit 0\n")
    (bin_dir / "git").write_text("#!/bin/sh\necho abc1234\n")
    (bin_dir / "python").write_text("#!/bin/sh\nexit 0\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "STUB_LOG": str(log)}
    if token is not None:
        env["GHCR_TOKEN"] = token
    proc = subprocess.run(["bash", str(ROOT / "{{path:infra/deploy.sh}}")], env=env,
                          capture_output=True, timeout=30)
    return proc.returncode, (log.read_text().strip() if log.exists() else None)


def test_deploy_logs_in_with_the_deployment_credential_or_refuses(tmp_path, deployed):
    code, token = _run_deploy(tmp_path, deployed["GHCR_TOKEN"])
    assert code == 0 and token == deployed["GHCR_TOKEN"], \
        "the deploy does not log in with the deploy environment's GHCR_TOKEN"
    code, token = _run_deploy(tmp_path, None)
    assert code != 0 and not token, "the deploy ran without GHCR_TOKEN"


def test_deploy_script_takes_the_credential_from_the_environment():
    text = (ROOT / "{{path:infra/deploy.sh}}").read_text()
    m = re.search(r"^GHCR_TOKEN=\"?([^\"\n]*)\"?\s*$", text, re.M)
    assert m, "the deploy script no longer defines GHCR_TOKEN"
    assert re.fullmatch(r"\$\{?GHCR_TOKEN(:?[-?][^}]*)?\}?", m.group(1)), \
        f"the deploy script sets GHCR_TOKEN itself: {m.group(1)!r}"
