"""Plain request descriptions; the outbound worker does the actual I/O."""
import json


def build_request(method, url, headers=None, body=None):
    """Return a dict describing an HTTP request; JSON-encodes dict bodies."""
    headers = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body, sort_keys=True)
        headers.setdefault("Content-Type", "application/json")
    return {"method": method.upper(), "url": url, "headers": headers, "body": body}


def bearer(token):
    return {"Authorization": f"Bearer {token}"}
