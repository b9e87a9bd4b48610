"""The Model Context Protocol's stdio transport and the server's half of its lifecycle:
JSON-RPC 2.0 messages, one per line, on stdin and stdout; nothing else on stdout.

Written here rather than taken from the `mcp` SDK: a stdio server of four tools needs
`initialize`, `tools/list`, `tools/call` and `ping`, about a page, where the SDK brings
some fifteen packages (pydantic, starlette, uvicorn, httpx, jwt...) and an HTTP stack
this server never opens.

Bounded: a line longer than LINE_MAX is refused as a parse error (its rest is read and
dropped); an answer is one line of JSON, its text cut by the tools (mcp_tools.py).
Errors: a line that is not JSON -32700; not a request -32600; an unknown method -32601;
bad arguments -32602; a tool's own failure is a result with `isError: true`, as the
protocol asks, so the model reads it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO, Any

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first
LINE_MAX = 1 << 20
PARSE, INVALID, NO_METHOD, BAD_PARAMS = -32700, -32600, -32601, -32602


class BadParams(ValueError):
    """The arguments do not fit the tool's schema; `str()` says which."""


Tool = tuple[dict[str, Any], Callable[[dict[str, Any]], tuple[str, bool]]]


class Server:
    """Answers each request line with one response line; `tools` maps a name to (its
    description for tools/list, the function answering (text, is_error))."""

    def __init__(self, name: str, version: str, tools: dict[str, Tool], instructions: str):
        self.info = {"name": name, "version": version}
        self.tools = tools
        self.instructions = instructions

    def serve(self, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        while True:
            line = stdin.readline(LINE_MAX + 1)
            if not line:
                return
            if len(line) > LINE_MAX and not line.endswith(b"\n"):
                while (rest := stdin.readline(LINE_MAX)) and not rest.endswith(b"\n"):
                    pass
                answer: dict[str, Any] | None = _error(None, PARSE, "message too long")
            elif not line.strip():
                continue
            else:
                answer = self.handle(line)
            if answer is not None:
                stdout.write(json.dumps(answer, ensure_ascii=False).encode() + b"\n")
                stdout.flush()

    def handle(self, line: bytes) -> dict[str, Any] | None:
        try:
            msg = json.loads(line)
        except ValueError:
            return _error(None, PARSE, "not JSON")
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return _error(None, INVALID, "not a JSON-RPC 2.0 message")
        method, rid = msg.get("method"), msg.get("id")
        if "id" not in msg or method is None:  # a notification, or a response: no answer
            return None
        params = msg.get("params") or {}
        if not isinstance(method, str) or not isinstance(params, dict):
            return _error(rid, INVALID, "bad request")
        try:
            result = self.call(method, params)
        except BadParams as exc:
            return _error(rid, BAD_PARAMS, str(exc))
        except LookupError:
            return _error(rid, NO_METHOD, f"no method {method}")
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in VERSIONS else VERSIONS[0]
            return {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": self.info,
                "instructions": self.instructions,
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": [desc for desc, _ in self.tools.values()]}
        if method == "tools/call":
            name = params.get("name")
            args = params.get("arguments") or {}
            if name not in self.tools or not isinstance(args, dict):
                raise BadParams(f"no tool {name!r}")
            text, failed = self.tools[str(name)][1](args)
            return {"content": [{"type": "text", "text": text}], "isError": failed}
        raise LookupError(method)


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def run(server: Server) -> int:
    server.serve(sys.stdin.buffer, sys.stdout.buffer)
    return 0
