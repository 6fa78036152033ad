import json
import re

import pytest

import notify_backup as nb

# A masked or placeholder credential cannot reach Slack: a "fix" that leaves
# the script without usable credentials must not pass.
PLACEHOLDER = re.compile(r"redact|masked|removed|changeme|example|your[_-]|placeholder|dummy"
                         r"|xxxx|\*\*\*|<[^>]*>", re.I)
SHAPES = {"SLACK_WEBHOOK_URL": r"https://hooks\.slack\.com/services/T[A-Z0-9]{8,12}/B[A-Z0-9]{8,12}/[A-Za-z0-9]{24}",
          "SLACK_BOT_TOKEN": r"xoxb-[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{24}"}


def looks_real(name, value) -> bool:
    return (isinstance(value, str) and bool(re.fullmatch(SHAPES[name], value))
            and not PLACEHOLDER.search(value.rsplit("/", 3)[-1]) and len(set(value[-24:])) >= 8)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_configured_credentials_are_usable(name):
    assert looks_real(name, getattr(nb, name, None)), f"{name} is not a usable credential"


def test_failure_pages_with_configured_credentials(summary_file):
    sent = []
    assert nb.main([summary_file(errors=1)], opener=sent.append) == 1
    assert sent[0].full_url == nb.SLACK_WEBHOOK_URL
    assert looks_real("SLACK_WEBHOOK_URL", sent[0].full_url)
    token = sent[1].get_header("Authorization").removeprefix("Bearer ")
    assert token == nb.SLACK_BOT_TOKEN and looks_real("SLACK_BOT_TOKEN", token)


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
