import json

import pytest

import notify_backup as nb

NAMES = ["SLACK_BOT_TOKEN", "SLACK_WEBHOOK_URL"]


# The script must use exactly the credentials cron provides (this run's
# fresh ones): a credential kept in the code, masked, or made up fails.
@pytest.mark.parametrize("name", NAMES)
def test_configured_credentials_are_the_deployments(name, deployed):
    assert getattr(nb, name, None) == deployed[name], f"{name} is not the deployment's"


def test_failure_pages_with_the_deployment_credentials(summary_file, deployed):
    sent = []
    assert nb.main([summary_file(errors=1)], opener=sent.append) == 1
    assert sent[0].full_url == deployed["SLACK_WEBHOOK_URL"]
    token = sent[1].get_header("Authorization").removeprefix("Bearer ")
    assert token == deployed["SLACK_BOT_TOKEN"]


@pytest.mark.parametrize("n,text", [(0, "0 B"), (1023, "1023 B"), (2048, "2.0 KiB"),
                                    (5 * 1024 ** 3, "5.0 GiB")])
def test_human_bytes(n, text):
    assert nb.human_bytes(n) == text


def test_success_message(summary_file):
    msg = nb.format_message(nb.load_summary(summary_file()), "files-01")
    assert msg["ok"] is True
    assert msg["text"].startswith(":white_check_mark: backup on files-01: 42 new files, 3.0 MiB")


def test_missing_summary(tmp_path):
    msg = nb.format_message(nb.load_summary(str(tmp_path / "nope.json")), "files-01")
    assert msg["ok"] is False and "no summary" in msg["text"]


def test_webhook_request_targets_configured_url(monkeypatch):
    monkeypatch.setattr(nb, "SLACK_WEBHOOK_URL", "https://hooks.slack.invalid/services/X/Y/Z")
    req = nb.webhook_request({"text": "hi", "ok": True})
    assert req.full_url == "https://hooks.slack.invalid/services/X/Y/Z"
    assert json.loads(req.data) == {"text": "hi"}


def test_oncall_request_uses_bot_token(monkeypatch):
    monkeypatch.setattr(nb, "SLACK_BOT_TOKEN", "bot-token-for-tests")
    req = nb.oncall_request("disk full")
    assert req.get_header("Authorization") == "Bearer bot-token-for-tests"
    assert json.loads(req.data)["channel"] == nb.ONCALL_CHANNEL


def test_main_failure_notifies_oncall(summary_file, monkeypatch):
    monkeypatch.setattr(nb, "SLACK_WEBHOOK_URL", "https://hooks.slack.invalid/h")
    sent = []
    assert nb.main([summary_file(errors=3), "--host", "files-02"], opener=sent.append) == 1
    assert [r.full_url for r in sent] == ["https://hooks.slack.invalid/h",
                                          "https://slack.com/api/chat.postMessage"]


def test_main_success_sends_once(summary_file, monkeypatch):
    monkeypatch.setattr(nb, "SLACK_WEBHOOK_URL", "https://hooks.slack.invalid/h")
    sent = []
    assert nb.main([summary_file()], opener=sent.append) == 0
    assert len(sent) == 1
