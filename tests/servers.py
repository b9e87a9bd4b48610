"""Real loopback HTTP consumers for tests: one that accepts, refuses, hangs, trickles,
floods, or answers a scripted sequence of statuses and headers; and an OTLP/HTTP logs
receiver that decodes every request with the official protobuf definitions."""

from __future__ import annotations

import base64
import gzip
import itertools
import json
import os
import re
import socket
import threading
import time
from typing import Any

CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")


def camel_keys_only(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A json.loads object hook refusing any key that is not lowerCamelCase: the OTLP/JSON
    mapping requires it, while protobuf's parser alone also accepts snake_case."""
    for key, _ in pairs:
        if not CAMEL.match(key):
            raise ValueError(f"JSON key {key!r} is not lowerCamelCase")
    return dict(pairs)


ID_SIZES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


def ids_as_base64(node: Any) -> Any:
    """OTLP/JSON writes trace and span ids as hex (its one exception to the protobuf JSON
    mapping, which would read them as base64): check the hex, hand protobuf base64."""
    if isinstance(node, list):
        return [ids_as_base64(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k in ID_SIZES and isinstance(v, str) and v:
            raw = bytes.fromhex(v)  # raises on anything but hex
            if len(raw) != ID_SIZES[k] or v != v.lower():
                raise ValueError(f"{k} {v!r} is not {ID_SIZES[k]} bytes of lowercase hex")
            out[k] = base64.b64encode(raw).decode()
        else:
            out[k] = ids_as_base64(v)
    return out


def decode_otlp_logs(headers: dict[str, str], body: bytes) -> tuple[dict[str, Any], Any]:
    """(the JSON, the ExportLogsServiceRequest) of one OTLP/HTTP JSON request; raises on a
    key that is not lowerCamelCase or anything the protobuf definitions reject."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
        ExportLogsServiceRequest,
    )

    if headers.get("content-encoding") == "gzip":
        body = gzip.decompress(body)
    text = body.decode("utf-8")
    obj = json.loads(text, object_pairs_hook=camel_keys_only)
    msg = ExportLogsServiceRequest()
    json_format.ParseDict(ids_as_base64(obj), msg)  # unknown fields and wrong types raise
    return obj, msg


def decode_otlp_protobuf(headers: dict[str, str], body: bytes, traces: bool) -> tuple[dict, Any]:
    """(the message as a dict, the Export*ServiceRequest) of one OTLP/HTTP protobuf request,
    parsed by the official definitions; raises on bytes they do not parse."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
        ExportLogsServiceRequest,
    )
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    if headers.get("content-encoding") == "gzip":
        body = gzip.decompress(body)
    kind = ExportTraceServiceRequest if traces else ExportLogsServiceRequest
    msg = kind.FromString(body)
    return json_format.MessageToDict(msg), msg


def decode_otlp_traces(headers: dict[str, str], body: bytes) -> tuple[dict[str, Any], Any]:
    """(the JSON, the ExportTraceServiceRequest) of one OTLP/HTTP JSON traces request,
    decoded as decode_otlp_logs does."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    if headers.get("content-encoding") == "gzip":
        body = gzip.decompress(body)
    text = body.decode("utf-8")
    obj = json.loads(text, object_pairs_hook=camel_keys_only)
    msg = ExportTraceServiceRequest()
    json_format.ParseDict(ids_as_base64(obj), msg)
    return obj, msg


class Server:
    """A tiny HTTP/1.1 server on 127.0.0.1 in a thread; `mode` picks its behaviour.

    accept: 200 and keep the JSON body (400 when it is not UTF-8); refuse: 503; hang:
    read the request, never answer; trickle: send the response one byte a second;
    flood: 200 with a body of FLOOD bytes (counted in `sent` as they go out); script:
    answer the requests in turn with `script`'s (status, headers), then 200. Every
    request is kept in `attempts` as (time.monotonic(), status answered, JSON body);
    `bodies` keeps the accepted ones.

    otlp: an OTLP/HTTP logs receiver (otlp-traces: a traces receiver, with
    decode_otlp_traces). Every request is decoded (decode_otlp_logs); one that fails is
    answered 400 and its error kept in `errors`. Requests are answered in turn by `script`'s
    (status, headers[, body bytes]) (status None: hang on that one request), then 200 with
    `{}`. `attempts` holds (time, status, JSON), `requests` the decoded
    ExportLogsServiceRequest of each answered one, `raw` every body as sent, `paths` and
    `headers` every request's."""

    FLOOD = 1 << 30

    def __init__(
        self,
        mode: str = "accept",
        port: int = 0,
        script: list[tuple[int, dict[str, str]]] | None = None,
        tls: Any = None,
        gate: Any = None,
    ):
        """`tls`: an ssl.SSLContext to serve https with (a handshake it refuses is kept in
        `handshakes` as False, one it takes as True); `gate(headers)`: the status to answer
        a request with before anything else looks at it (200 lets it through)."""
        self.tls, self.gate = tls, gate
        self.handshakes: list[bool] = []
        self.mode = mode
        self.script: list[tuple[Any, ...]] = list(script or [])
        self.requests: list[Any] = []
        self.raw: list[bytes] = []
        self.errors: list[str] = []
        self.paths: list[str] = []
        self.bodies: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.attempts: list[tuple[float, int, dict]] = []
        self.sent = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}/records"
        self.stopped = threading.Event()
        self.hung_up = threading.Event()
        self.conns: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.conns.append(conn)
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.paths.append(lines[0].split(" ")[1] if " " in lines[0] else "")
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        length = int(headers.get("content-length", 0))
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            body += chunk
        return headers, body

    def _handle(self, conn: socket.socket) -> None:
        if self.tls is not None:
            try:
                conn.settimeout(10)
                conn = self.tls.wrap_socket(conn, server_side=True)
                conn.settimeout(None)
                self.handshakes.append(True)
            except (OSError, ValueError):
                self.handshakes.append(False)
                conn.close()
                return
        try:
            while not self.stopped.is_set():
                req = self._read_request(conn)
                if req is None:
                    return
                headers, body = req
                status = self.gate(headers) if self.gate is not None else 200
                if status != 200:
                    self.attempts.append((time.monotonic(), status, {}))
                    head = f"HTTP/1.1 {status} Gated\r\nContent-Length: 0\r\n\r\n"
                    conn.sendall(head.encode("latin-1"))
                    continue
                if self.mode in ("otlp", "otlp-traces"):
                    if not self._otlp(conn, headers, body):
                        return
                    continue
                if self.mode == "hang":
                    self.stopped.wait()
                    return
                if self.mode == "trickle":
                    self.requests.append(headers)
                    for b in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok":
                        if self.stopped.wait(1.0):
                            return
                        try:
                            conn.sendall(bytes([b]))
                        except OSError:
                            self.hung_up.set()  # the client gave up before the answer ended
                            return
                    return
                if self.mode == "refuse":
                    conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
                    continue
                if self.mode == "flood":
                    self._flood(conn)
                    return
                if self.mode == "script":
                    status, extra = self.script.pop(0) if self.script else (200, {})
                    self.attempts.append((time.monotonic(), status, json.loads(body)))
                    if 200 <= status < 300:
                        self.headers.append(headers)
                        self.bodies.append(json.loads(body))
                    head = f"HTTP/1.1 {status} Scripted\r\nContent-Length: 0\r\n"
                    head += "".join(f"{k}: {v}\r\n" for k, v in extra.items())
                    conn.sendall((head + "\r\n").encode("latin-1"))
                    continue
                try:  # strict, as real servers are: json.loads(bytes) would pass surrogates
                    doc = json.loads(body.decode("utf-8"))
                except UnicodeDecodeError:
                    self.attempts.append((time.monotonic(), 400, {}))
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                    continue
                self.attempts.append((time.monotonic(), 200, doc))
                self.headers.append(headers)
                self.bodies.append(doc)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        except (OSError, ValueError):  # a client cut at its deadline; a torn body
            return
        finally:
            conn.close()

    def _otlp(self, conn: socket.socket, headers: dict[str, str], body: bytes) -> bool:
        """Decode and answer one OTLP request; False when the connection is done."""
        self.headers.append(headers)
        self.raw.append(body)
        traces = self.mode == "otlp-traces"
        protobuf = headers.get("content-type") == "application/x-protobuf"
        try:
            if protobuf:
                obj, msg = decode_otlp_protobuf(headers, body, traces)
            else:
                decode = decode_otlp_traces if traces else decode_otlp_logs
                obj, msg = decode(headers, body)
        except Exception as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}")
            self.attempts.append((time.monotonic(), 400, {}))
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return True
        status, extra, answer = 200, {}, (b"" if protobuf else b"{}")
        if self.script:
            step = self.script.pop(0)
            status, extra = step[0], step[1]
            answer = step[2] if len(step) > 2 else b""
        self.attempts.append((time.monotonic(), status, obj))
        if status is None:  # hang on this request
            self.stopped.wait(60)
            return False
        self.requests.append(msg)
        if 200 <= status < 300:
            self.bodies.append(obj)
        head = f"HTTP/1.1 {status} Scripted\r\nContent-Length: {len(answer)}\r\n"
        head += f"Content-Type: application/{'x-protobuf' if protobuf else 'json'}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in extra.items())
        conn.sendall((head + "\r\n").encode("latin-1") + answer)
        return True

    def _flood(self, conn: socket.socket) -> None:
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {self.FLOOD}\r\n\r\n".encode())
        chunk = b"x" * 65536
        while self.sent < self.FLOOD and not self.stopped.is_set():
            conn.sendall(chunk)  # raises once the client has closed the connection
            self.sent += len(chunk)

    def close(self) -> None:
        # stop the accept loop before closing its socket: closing a socket under a blocked
        # accept() frees the fd for the next test's server while the old thread uses it
        self.stopped.set()
        self.thread.join(timeout=5)
        self.sock.close()
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                c.close()
            except OSError:
                pass

    def wait_for_attempts(self, n: int, timeout: float = 30.0) -> list[tuple[float, int, dict]]:
        end = time.monotonic() + timeout
        while len(self.attempts) < n and time.monotonic() < end:
            time.sleep(0.02)
        return self.attempts

    def wait_for(self, n: int, timeout: float = 30.0) -> list[dict]:
        end = time.monotonic() + timeout
        while len(self.bodies) < n and time.monotonic() < end:
            time.sleep(0.02)
        return self.bodies


_offered = itertools.count()
PORTS_A_PROCESS = 1000  # each test process's own slice of the ports below the ephemeral


def free_port() -> int:
    """A loopback TCP port free now, for a server that cannot bind port 0 and say which
    it got (rsyslog's imrelp, PostgreSQL). It comes from below the kernel's ephemeral
    range, so no outgoing connection is given it between this probe and the server's
    bind (the port of `bind(0)` could be), and from this test process's own slice, so
    two test processes never offer the same one."""
    low = _ephemeral_low()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:]
    slots = (low - 10000) // PORTS_A_PROCESS
    if slots >= 1:
        base = 10000 + (int(worker) if worker.isdigit() else 0) % slots * PORTS_A_PROCESS
        for _ in range(PORTS_A_PROCESS):
            port = base + (os.getpid() + next(_offered)) % PORTS_A_PROCESS
            with socket.socket() as s:  # no SO_REUSEADDR: a port in TIME_WAIT is skipped
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            return port
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768
