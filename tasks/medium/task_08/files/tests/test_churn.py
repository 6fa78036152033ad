import json
import os
import sys
import types
from pathlib import Path

import pytest

from churn import features, score, warehouse

ROOT = Path(__file__).resolve().parents[1]


def test_connector_loads_the_deployment_credentials(deployed, monkeypatch):
    # What the warehouse connector gets: exactly the key file the deployment
    # mounted (this run's fresh one) and its passphrase.
    args = warehouse.connect_args(warehouse.load())
    assert args["private_key_file"] == deployed["WAREHOUSE_KEY_FILE"], \
        "the connector would not load the deployment's key file"
    assert Path(args["private_key_file"]).read_text() == deployed["key_pem"]
    assert args["private_key_file_pwd"] == deployed["WAREHOUSE_KEY_PASSPHRASE"], \
        "the connector would not use the deployment's passphrase"
    # Without the deployment's environment it gets no key pair at all.
    monkeypatch.delenv("WAREHOUSE_KEY_FILE")
    monkeypatch.delenv("WAREHOUSE_KEY_PASSPHRASE")
    try:
        args = warehouse.connect_args(warehouse.load())
    except (KeyError, ValueError, RuntimeError):
        return
    assert not Path(args["private_key_file"]).is_file(), "the connector loads a key of the repository"
    assert not args["private_key_file_pwd"], "the connector uses a passphrase of the repository"


class FakeOpenAI:
    """Stands in for openai.OpenAI: like the real client, it takes its key
    from `api_key` or else from OPENAI_API_KEY, and records it."""
    keys = []

    def __init__(self, api_key=None, **_):
        FakeOpenAI.keys.append(api_key or os.environ.get("OPENAI_API_KEY"))


def test_notebook_client_gets_the_deployment_credential(deployed, monkeypatch):
    # Run the notebook's code cells (pandas and openai stood in for) until
    # the OpenAI client exists: it must hold exactly the environment's key.
    nb = json.loads((ROOT / "notebooks" / "explore.ipynb").read_text())
    monkeypatch.setitem(sys.modules, "openai", types.SimpleNamespace(OpenAI=FakeOpenAI))
    monkeypatch.setitem(sys.modules, "pandas", types.ModuleType("pandas"))
    monkeypatch.setattr(FakeOpenAI, "keys", [])
    namespace = {"__name__": "__notebook__"}
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        exec(compile("".join(cell["source"]), "explore.ipynb", "exec"), namespace)  # noqa: S102
        if FakeOpenAI.keys:
            break
    assert FakeOpenAI.keys, "the notebook never creates the OpenAI client"
    assert FakeOpenAI.keys == [deployed["OPENAI_API_KEY"]], \
        "the notebook's client does not use the environment's OPENAI_API_KEY"


@pytest.mark.parametrize("part", ["key_file", "passphrase"])
def test_config_leaves_the_credentials_to_the_environment(part, monkeypatch):
    # Without the deployment's environment there is no key pair: the
    # config names no key file and carries no passphrase (in any encoding).
    monkeypatch.delenv("WAREHOUSE_KEY_FILE", raising=False)
    monkeypatch.delenv("WAREHOUSE_KEY_PASSPHRASE", raising=False)
    cfg = warehouse.load()
    if part == "key_file":
        assert not cfg["warehouse"].get("key_file"), "the config names a key file"
        try:
            path = warehouse.key_file(cfg)
        except (KeyError, ValueError):
            return
        assert not path.is_file(), f"{path} is a key file of the repository"
        return
    # A value that does not decode is a broken config, not an absent one.
    try:
        phrase = warehouse.key_passphrase(cfg)
    except KeyError:
        phrase = ""
    assert not phrase, "the config carries a passphrase"


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
    nb = json.loads((ROOT / "notebooks" / "explore.ipynb").read_text())
    assert nb["nbformat"] == 4
    assert any(c["cell_type"] == "code" for c in nb["cells"])
