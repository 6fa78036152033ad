"""Slack alerts for failed webhooks."""
import json

SLACK_WEBHOOK_URL = "{{secret:s5}}"


def alert_payload(source, event_id, error):
    text = f":rotating_light: webhook from *{source}* failed ({event_id}): {error}"
    return {"text": text[:3000]}


def alert_request(source, event_id, error):
    return {"method": "POST", "url": SLACK_WEBHOOK_URL,
            "body": json.dumps(alert_payload(source, event_id, error))}
