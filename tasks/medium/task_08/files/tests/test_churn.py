import base64
import binascii
import json
import re
from pathlib import Path

import pytest

from churn import features, score, warehouse

# A masked or placeholder credential cannot authenticate: a "fix" that
# leaves the job half-configured must not pass.
PLACEHOLDER = re.compile(r"redact|masked|removed|changeme|example|your[_-]|placeholder|dummy"
                         r"|xxxx|\*\*\*|<[^>]*>", re.I)
PEM = re.compile(r"-----BEGIN ((?:[A-Z]+ )*)PRIVATE KEY-----\n(?:[A-Za-z-]+: [^\n]*\n)*\n?"
                 r"((?:[A-Za-z0-9+/=]{16,76}\n){8,})-----END \1PRIVATE KEY-----")


def is_private_key(text: str) -> bool:
    m = PEM.search(text)
    if not m:
        return False
    try:
        return len(base64.b64decode("".join(m.group(2).split()), validate=True)) >= 256
    except (binascii.Error, ValueError):
        return False


def configured_passphrase(cfg):
    try:
        return warehouse.key_passphrase(cfg)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


def test_connector_gets_a_loadable_key(monkeypatch, tmp_path):
    # What the warehouse connector would load: the configured key file, or
    # the one the environment names (the deployment mounts a real key).
    monkeypatch.delenv("WAREHOUSE_KEY_PASSPHRASE", raising=False)
    cfg = warehouse.load()
    if not cfg["warehouse"].get("key_file"):
        mounted = tmp_path / "sa.pem"
        mounted.write_text("mounted by the deployment\n")
        monkeypatch.setenv("WAREHOUSE_KEY_FILE", str(mounted))
        assert warehouse.connect_args(cfg)["private_key_file"] == str(mounted)
        return
    monkeypatch.delenv("WAREHOUSE_KEY_FILE", raising=False)
    path = Path(warehouse.connect_args(cfg)["private_key_file"])
    assert path.is_file() and is_private_key(path.read_text()), "the connector would load no key"


def test_notebook_gets_a_usable_openai_key():
    # The notebook sets OPENAI_API_KEY to a usable key (today) or reads it
    # from the environment; a masked value breaks every LLM cell.
    nb = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / "explore.ipynb").read_text())
    code = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assigned = re.findall(r"OPENAI_API_KEY\"?\]?\s*=\s*[\"']([^\"']*)[\"']", code)
    for value in assigned:
        assert (re.fullmatch(r"sk-(proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,200}", value)
                and not PLACEHOLDER.search(value) and len(set(value)) >= 8), \
            f"the notebook sets an unusable OPENAI_API_KEY {value!r}"
    assert assigned or re.search(r"environ(\.get\(|\[)[\"']OPENAI_API_KEY|getenv\([\"']OPENAI_API_KEY", code) \
        or "OpenAI()" in code, "the notebook no longer gets OPENAI_API_KEY"


@pytest.mark.parametrize("part", ["key_file", "passphrase"])
def test_config_key_pair_is_complete_or_left_to_the_environment(part, monkeypatch):
    # Key-pair auth is all or nothing: without the environment, the config
    # either names a real key file and its passphrase, or neither.
    monkeypatch.delenv("WAREHOUSE_KEY_FILE", raising=False)
    monkeypatch.delenv("WAREHOUSE_KEY_PASSPHRASE", raising=False)
    cfg = warehouse.load()
    has_key_file = bool(cfg["warehouse"].get("key_file"))
    if part == "key_file":
        if has_key_file:
            path = warehouse.key_file(cfg)
            assert path.is_file() and is_private_key(path.read_text()), \
                f"{path} holds no private key"
        return
    phrase = configured_passphrase(cfg)
    if not has_key_file:
        assert phrase == "", "a passphrase without a key file"
    else:
        assert (isinstance(phrase, str) and re.fullmatch(r"[A-Za-z0-9]{16,128}", phrase)
                and not PLACEHOLDER.search(phrase) and len(set(phrase)) >= 8), \
            "the configured key file has no usable passphrase"


def test_parse_and_features(usage_csv):
    accounts = features.parse_usage(usage_csv.read_text())
    assert set(accounts) == {"acme", "bluefin", "corvid"}
    f = features.features(accounts["bluefin"])
    assert f["logins_per_week"] == 2.0
    assert f["seats_used_ratio"] == pytest.approx(0.08)
    assert f["days_since_last_login"] == 19.0


def test_score_is_probability_and_monotonic():
    base = {"logins_per_week": 10, "seats_used_ratio": 0.8, "tickets_open": 1, "days_since_last_login": 3}
    worse = dict(base, days_since_last_login=30)
    assert 0 < score.score(base) < score.score(worse) < 1


def test_rank_orders_by_risk(usage_csv):
    ranked = score.rank(usage_csv.read_text(), top=2)
    assert [acc for acc, _ in ranked] == ["bluefin", "corvid"]


def test_main_flags_at_risk(usage_csv):
    import io
    out = io.StringIO()
    assert score.main([str(usage_csv), "--top", "3"], out=out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("bluefin\t") and lines[0].endswith("AT RISK")
    assert len(lines) == 3


def test_warehouse_config():
    cfg = warehouse.load()
    args = warehouse.connect_args(cfg)
    assert args["user"] == "svc_churn" and args["database"] == "ANALYTICS"
    assert cfg["model"]["threshold"] == pytest.approx(0.62)


def test_credentials_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("WAREHOUSE_KEY_PASSPHRASE", "pass-from-env")
    monkeypatch.setenv("WAREHOUSE_KEY_FILE", str(tmp_path / "sa.pem"))
    args = warehouse.connect_args(warehouse.load())
    assert args["private_key_file_pwd"] == "pass-from-env"
    assert args["private_key_file"] == str(tmp_path / "sa.pem")


def test_notebook_is_valid_json():
    nb = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / "explore.ipynb").read_text())
    assert nb["nbformat"] == 4
    assert any(c["cell_type"] == "code" for c in nb["cells"])
