"""WSGI entry point."""
import hashlib
import hmac
import json

from . import config, github

RECEIVED: list[dict] = []


def verify_signature(body: bytes, header: str | None, secret: str | None = None) -> bool:
    secret = config.WEBHOOK_SECRET if secret is None else secret
    if not header or not header.startswith("sha256="):
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header[len("sha256="):])


def _json(start_response, status: str, payload) -> list[bytes]:
    body = json.dumps(payload).encode()
    start_response(status, [("Content-Type", "application/json"),
                            ("Content-Length", str(len(body)))])
    return [body]


def make_app(transport=None):
    def app(environ, start_response):
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO", "/")
        if path == "/health":
            return _json(start_response, "200 OK", {"status": "ok"})
        if path.startswith("/releases/") and method == "GET":
            repo = path[len("/releases/"):].strip("/")
            if repo not in config.ALLOWED_REPOS:
                return _json(start_response, "404 Not Found", {"error": "unknown repository"})
            kwargs = {"transport": transport} if transport else {}
            return _json(start_response, "200 OK", github.latest_releases(repo, **kwargs))
        if path == "/webhook" and method == "POST":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            if length > config.MAX_BODY_BYTES:
                return _json(start_response, "413 Payload Too Large", {"error": "too large"})
            body = environ["wsgi.input"].read(length)
            if not verify_signature(body, environ.get("HTTP_X_HUB_SIGNATURE_256")):
                return _json(start_response, "401 Unauthorized", {"error": "bad signature"})
            event = json.loads(body or b"{}")
            RECEIVED.append({"action": event.get("action"),
                             "tag": event.get("release", {}).get("tag_name")})
            return _json(start_response, "202 Accepted", {"queued": True})
        return _json(start_response, "404 Not Found", {"error": "not found"})
    return app


application = make_app()

if __name__ == "__main__":
    from wsgiref.simple_server import make_server
    make_server("", config.PORT, application).serve_forever()
