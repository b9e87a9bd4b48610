"""A loopback Splunk HTTP Event Collector for tests: it checks each request as HEC's
documentation describes it and answers as HEC does.

    POST /services/collector/event   `Authorization: Splunk <token>`; the body one or
                                     more event objects, concatenated (whitespace
                                     between them allowed); each with a non-blank
                                     `event`, and `time` (epoch seconds), `host`,
                                     `source`, `sourcetype` as their documented types,
                                     `fields` a flat object of strings or string lists
    POST /services/collector/ack     `{"acks": [id, ...]}` -> `{"acks": {"id": bool}}`

Answers `{"text", "code"}` with HEC's codes: 2 (no token, 401), 4 (wrong token, 403),
6 (not JSON objects, 400), 10 (no channel while acknowledgement is on, 400), 12 and 13
(event missing or blank, 400), 0 (success, with an `ackId` when acknowledgement is on).
`script` answers the next requests with (status, code) first. `events` keeps every
accepted event object, `problems` what a refused request broke.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def concatenated(text: str) -> list[Any]:
    """The JSON values of a body of concatenated JSON (ValueError when it is not)."""
    dec, out, i = json.JSONDecoder(), [], 0
    while True:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i == len(text):
            return out
        value, i = dec.raw_decode(text, i)
        out.append(value)


def envelope_problem(obj: Any) -> tuple[int, str] | None:
    if not isinstance(obj, dict):
        return 6, "not an object"
    if "event" not in obj:
        return 12, "event field is required"
    if obj["event"] in ("", None, {}):
        return 13, "event field cannot be blank"
    if "time" in obj and not isinstance(obj["time"], (int, float)):
        return 6, "time is not epoch seconds"
    for key in ("host", "source", "sourcetype", "index"):
        if key in obj and not isinstance(obj[key], str):
            return 6, f"{key} is not a string"
    fields = obj.get("fields", {})
    if not isinstance(fields, dict) or not all(
        isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))
        for v in fields.values()
    ):
        return 15, "fields must be flat"
    unknown = set(obj) - {"time", "host", "source", "sourcetype", "index", "fields", "event"}
    if unknown:
        return 6, f"unknown keys {sorted(unknown)}"
    return None


class Hec:
    def __init__(self, token: str = "t0ken", ack: bool = False, ack_after: int = 0):
        self.token, self.ack, self.ack_after = token, ack, ack_after
        self.script: list[tuple[int, int]] = []
        self.events: list[dict[str, Any]] = []
        self.requests: list[dict[str, str]] = []  # each request's headers
        self.problems: list[str] = []
        self.polls: dict[int, int] = {}
        self.next_ack = 0
        self.lock = threading.Lock()
        hec = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                status, answer = hec.handle(self.path, dict(self.headers.items()), body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/services/collector/event"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def refuse(self, status: int, code: int, why: str) -> tuple[int, dict[str, Any]]:
        self.problems.append(why)
        return status, {"text": why, "code": code}

    def handle(self, path: str, headers: dict[str, str], body: bytes):
        headers = {k.lower(): v for k, v in headers.items()}
        with self.lock:
            self.requests.append(headers)
            auth = headers.get("authorization", "")
            if not auth.startswith("Splunk "):
                return self.refuse(401, 2, "Token is required")
            if auth != f"Splunk {self.token}":
                return self.refuse(403, 4, "Invalid token")
            if path.startswith("/services/collector/ack"):
                ids = json.loads(body)["acks"]
                out = {}
                for i in ids:
                    self.polls[i] = self.polls.get(i, 0) + 1
                    out[str(i)] = self.polls[i] > self.ack_after
                return 200, {"acks": out}
            if self.script:
                status, code = self.script.pop(0)
                return status, {"text": "scripted", "code": code}
            if self.ack and not headers.get("x-splunk-request-channel"):
                return self.refuse(400, 10, "Data channel is missing")
            try:
                objs = concatenated(body.decode("utf-8"))
            except ValueError:
                return self.refuse(400, 6, "Invalid data format")
            if not objs:
                return self.refuse(400, 5, "No data")
            for obj in objs:
                problem = envelope_problem(obj)
                if problem:
                    return self.refuse(400, problem[0], problem[1])
            self.events.extend(objs)
            if self.ack:
                self.next_ack += 1
                return 200, {"text": "Success", "code": 0, "ackId": self.next_ack - 1}
            return 200, {"text": "Success", "code": 0}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
