"""Incident summaries: build the Anthropic Messages API request."""
import json

from services.scheduler import settings


def prompt(incident):
    events = "\n".join(f"- {e['ts']} {e['device_id']}: {e['message']}" for e in incident["events"])
    return (f"Summarise incident {incident['id']} for the on-call engineer in three "
            f"sentences. Events:\n{events}")


def summary_request(incident):
    if not incident.get("events"):
        raise ValueError("incident has no events")
    return {
        "method": "POST",
        "url": settings.ANTHROPIC_URL,
        "headers": {"x-api-key": settings.ANTHROPIC_API_KEY,
                    "anthropic-version": "2023-06-01",
                    "content-type": "application/json"},
        "body": json.dumps({"model": settings.ANTHROPIC_MODEL,
                            "max_tokens": settings.SUMMARY_MAX_TOKENS,
                            "messages": [{"role": "user", "content": prompt(incident)}]}),
    }
