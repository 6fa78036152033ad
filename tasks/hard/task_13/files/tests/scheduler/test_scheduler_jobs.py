import json
from datetime import datetime

import pytest

from services.scheduler import cron, settings, summarizer


def test_every_fifteen_minutes():
    assert cron.next_run("*/15 *", datetime(2025, 3, 1, 10, 7, 30)) == datetime(2025, 3, 1, 10, 15)


def test_fixed_hour_rolls_to_next_day():
    assert cron.next_run("0 3", datetime(2025, 3, 1, 3, 0)) == datetime(2025, 3, 2, 3, 0)


def test_bad_fields_rejected():
    with pytest.raises(ValueError):
        cron.parse("61 *")
    with pytest.raises(ValueError):
        cron.parse("*/0 *")


def test_summary_request_shape():
    incident = {"id": 17, "events": [{"ts": "10:00", "device_id": "d1", "message": "overheat"}]}
    req = summarizer.summary_request(incident)
    body = json.loads(req["body"])
    assert req["headers"]["x-api-key"] == settings.ANTHROPIC_API_KEY
    assert body["max_tokens"] == settings.SUMMARY_MAX_TOKENS
    assert "- 10:00 d1: overheat" in body["messages"][0]["content"]


def test_summary_needs_events():
    with pytest.raises(ValueError):
        summarizer.summary_request({"id": 1, "events": []})
