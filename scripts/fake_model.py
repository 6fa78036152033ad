#!/usr/bin/env python3
"""A tiny OpenAI-compatible chat server for smoke tests without a real model.

Usage: fake_model.py PORT [COMMAND]

Every POST ending in /chat/completions gets one assistant message whose
content is COMMAND (default `ls`), so the baseline agent's request/response
path and its [START]/[STEP]/[END] log can be checked offline. It binds to
127.0.0.1 only, reads at most 4 MiB of request body, and logs nothing but
errors. GET /v1/models lists the one fake model. Anything else is a 404.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 4 << 20


class Handler(BaseHTTPRequestHandler):
    reply = "ls"

    def _send(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):  # noqa: N802 (http.server API)
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = -1
        if n < 0 or n > MAX_BODY:
            self._send(413, {"error": {"message": "body too large or bad length"}})
            return
        raw = self.rfile.read(n)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": "not found: " + self.path}})
            return
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, {"error": {"message": "invalid JSON"}})
            return
        if not isinstance(req, dict) or not isinstance(req.get("messages"), list):
            self._send(400, {"error": {"message": "messages must be a list"}})
            return
        self._send(200, {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": req.get("model", "fake"),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": self.reply},
                "finish_reason": "stop",
            }],
            "usage": {"prompt_tokens": 0, "completion_tokens": 1, "total_tokens": 1},
        })

    def do_GET(self):  # noqa: N802
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        else:
            self._send(404, {"error": {"message": "not found: " + self.path}})

    def log_message(self, fmt, *args):  # quiet: stdout/stderr belong to the caller
        pass


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    port = int(sys.argv[1])
    if len(sys.argv) == 3:
        Handler.reply = sys.argv[2]
    srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
