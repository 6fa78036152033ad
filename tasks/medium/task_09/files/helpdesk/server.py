"""WSGI app: GET /health, POST /triage (Bearer JWT)."""
import json

from . import auth, triage


def application(environ, start_response, send=None):
    def reply(status, payload):
        data = json.dumps(payload).encode()
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]

    path, method = environ.get("PATH_INFO", "/"), environ.get("REQUEST_METHOD", "GET")
    if path == "/health":
        return reply("200 OK", {"status": "ok"})
    if path == "/triage" and method == "POST":
        header = environ.get("HTTP_AUTHORIZATION", "")
        if not header.startswith("Bearer "):
            return reply("401 Unauthorized", {"error": "missing token"})
        try:
            claims = auth.verify(header[len("Bearer "):])
        except auth.AuthError as exc:
            return reply("401 Unauthorized", {"error": str(exc)})
        length = min(int(environ.get("CONTENT_LENGTH") or 0), 64 * 1024)
        ticket = json.loads(environ["wsgi.input"].read(length) or b"{}")
        level = triage.priority(ticket.get("subject", ""), ticket.get("body", ""))
        if level == "P1" and send:
            send(triage.slack_request(ticket))
        return reply("200 OK", {"priority": level, "by": claims.get("sub")})
    return reply("404 Not Found", {"error": "not found"})


if __name__ == "__main__":
    from wsgiref.simple_server import make_server
    make_server("", 8000, application).serve_forever()
