"""Slack alerts for failed webhooks."""
from shared import env
from shared.http import build_request

SLACK_WEBHOOK_URL = env.get("SLACK_WEBHOOK_URL")


def alert_payload(source, event_id, error):
    text = f":rotating_light: webhook from *{source}* failed ({event_id}): {error}"
    return {"text": text[:3000]}


def alert_request(source, event_id, error):
    if not SLACK_WEBHOOK_URL:
        return None  # alerts disabled in this environment
    return build_request("POST", SLACK_WEBHOOK_URL, body=alert_payload(source, event_id, error))
