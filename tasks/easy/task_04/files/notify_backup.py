#!/usr/bin/env python3
"""Send the nightly restic backup summary to Slack.

Exit status: 0 when the backup succeeded and Slack accepted the message,
1 when the backup failed (after notifying), 2 on usage errors.
"""
import argparse
import json
import sys
import urllib.request

{{slot:webhook:1}}{{slot:bot_token:1}}SLACK_API = "https://slack.com/api"
{{slot:webhook:2}}ONCALL_CHANNEL = "C04OPSBKUP"


{{slot:bot_token:3}}def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    raise AssertionError("unreachable")


def load_summary(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return {"message_type": "missing"}
    if data.get("message_type") != "summary":
        raise ValueError("not a restic summary line")
    return data


def format_message(summary: dict, host: str) -> dict:
    if summary.get("message_type") != "summary":
        return {"text": f":rotating_light: backup on {host}: no summary found", "ok": False}
    ok = summary.get("snapshot_id") is not None and summary.get("errors", 0) == 0
    icon = ":white_check_mark:" if ok else ":x:"
    text = (f"{icon} backup on {host}: {summary.get('files_new', 0)} new files, "
            f"{human_bytes(summary.get('data_added', 0))} added in "
            f"{summary.get('total_duration', 0):.0f}s")
    return {"text": text, "ok": ok}


def webhook_request(message: dict) -> urllib.request.Request:
    body = json.dumps({"text": message["text"]}).encode()
    return urllib.request.Request(SLACK_WEBHOOK_URL, data=body, method="POST",
                                  headers={"Content-Type": "application/json"})


def oncall_request(text: str) -> urllib.request.Request:
    body = json.dumps({"channel": ONCALL_CHANNEL, "text": f"<!subteam^S02ONCALL> {text}"}).encode()
    return urllib.request.Request(f"{SLACK_API}/chat.postMessage", data=body, method="POST",
                                  headers={"Content-Type": "application/json; charset=utf-8",
                                           "Authorization": f"Bearer {SLACK_BOT_TOKEN}"})


def _open(req):
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.status


def main(argv=None, opener=_open) -> int:
    parser = argparse.ArgumentParser(prog="notify_backup")
    parser.add_argument("summary")
    parser.add_argument("--host", default="files-01")
    args = parser.parse_args(argv)
    message = format_message(load_summary(args.summary), args.host)
    opener(webhook_request(message))
    if not message["ok"]:
        opener(oncall_request(message["text"]))
        return 1
    return 0


{{slot:bot_token:2}}{{slot:webhook:3}}if __name__ == "__main__":
    sys.exit(main())
