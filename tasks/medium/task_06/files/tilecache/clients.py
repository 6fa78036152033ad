"""Request builders for the upstream tile API, Google geocoding and SendGrid."""
import json
import os
import urllib.parse
import urllib.request

from . import config


def tile_request(cfg: dict, z: int, x: int, y: int) -> urllib.request.Request:
    url = f"{cfg['upstream']['url']}/{z}/{x}/{y}.png"
    return urllib.request.Request(url, headers={
        "Authorization": f"Bearer {config.upstream_token(cfg)}",
        "User-Agent": "tilecache/0.9"})


def geocode_url(address: str) -> str:
    query = urllib.parse.urlencode({"address": address,
                                    "key": os.environ.get("GOOGLE_MAPS_API_KEY", "")})
    return f"https://maps.googleapis.com/maps/api/geocode/json?{query}"


def alert_request(cfg: dict, subject: str, text: str) -> urllib.request.Request:
    body = {
        "personalizations": [{"to": [{"email": os.environ.get("TILECACHE_ALERT_TO",
                                                              "maps-oncall@northwind.example")}]}],
        "from": {"email": cfg["alerts"]["from"]},
        "subject": subject,
        "content": [{"type": "text/plain", "value": text}],
    }
    return urllib.request.Request(
        "https://api.sendgrid.com/v3/mail/send", data=json.dumps(body).encode(), method="POST",
        headers={"Authorization": f"Bearer {os.environ.get('SENDGRID_API_KEY', '')}",
                 "Content-Type": "application/json"})
