"""Rule-based ticket priority plus request builders for Claude and Slack."""
import json
import os
import re
import urllib.request

RULES = [
    ("P1", re.compile(r"\b(outage|down|all users|data loss|security)\b", re.I)),
    ("P2", re.compile(r"\b(error|broken|cannot|can't|failed)\b", re.I)),
    ("P3", re.compile(r"\b(how do i|question|feature request)\b", re.I)),
]


def priority(subject: str, body: str = "") -> str:
    text = f"{subject}\n{body}"
    for level, pattern in RULES:
        if pattern.search(text):
            return level
    return "P4"


def summary_request(ticket: dict) -> urllib.request.Request:
    body = {"model": "claude-3-5-haiku-latest", "max_tokens": 200,
            "messages": [{"role": "user", "content":
                          f"Summarise this support ticket in two sentences:\n{ticket['subject']}\n{ticket.get('body', '')}"}]}
    return urllib.request.Request(
        "https://api.anthropic.com/v1/messages", data=json.dumps(body).encode(), method="POST",
        headers={"x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
                 "anthropic-version": "2023-06-01", "content-type": "application/json"})


def slack_token() -> str:
    """SLACK_BOT_TOKEN, or SLACK_BOT_TOKEN_HEX (hex-encoded, as some manifests ship it)."""
    token = os.environ.get("SLACK_BOT_TOKEN")
    if token:
        return token
    return bytes.fromhex(os.environ.get("SLACK_BOT_TOKEN_HEX", "")).decode()


def slack_request(ticket: dict, channel: str = "#support-p1") -> urllib.request.Request:
    body = {"channel": channel, "text": f":fire: P1 ticket: {ticket['subject']}"}
    return urllib.request.Request(
        "https://slack.com/api/chat.postMessage", data=json.dumps(body).encode(), method="POST",
        headers={"Authorization": f"Bearer {slack_token()}",
                 "Content-Type": "application/json; charset=utf-8"})
