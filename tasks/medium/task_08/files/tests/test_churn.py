import json
from pathlib import Path

import pytest

from churn import features, score, warehouse


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
