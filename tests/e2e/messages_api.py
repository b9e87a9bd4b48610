"""Our scripted stand-in for the Anthropic Messages API, for the real Claude Code client.

Claude Code, pointed at it with ANTHROPIC_BASE_URL, runs real tools and fires real hooks.
The "model" picks what to do from markers in the turn's user text:

    [secret]  one Bash call whose command carries a fake GitHub token
    [par]     two Bash calls in one response (parallel tool use)
    [sub]     an Agent call; the subagent (its task starts SUBTASK) runs one Bash call
    [fail]    one Bash call that exits 3
    [wait]    one Bash call that sleeps 3 s (time to type a message while it runs)
    [cut]     one complete text block (PARTIAL-REPLY <n>), then the stream stalls before
              the message ends, until the client hangs up or `release()` (at most 30 s):
              the client's interrupt cuts a real reply short
    [write]   one Write call of a new file in WRITE_DIR, outside the project: a tool the
              session's allow list leaves out, in a folder it does not own (a
              permission prompt)
    [recall]  one call of ways' MCP tool mcp__ways__search_history for "git push" (shell
              tools only), then mcp__ways__verify_record for its first hit
    [apierr]  the request fails with 529 (`overloaded_error`), when the turn's newest
              text holds it (Claude Code resends a failed turn with the next prompt)
    (none)    a thinking block (THINKING-MARKER ...), a text block and one Bash call
After tool results it answers `FINAL-REPLY <n>` (a subagent: `SUBAGENT-DONE <n>`); a
summary request (compaction, Claude Code's internal agents) gets `SUMMARY <n>`. Each
response reports its own token usage (usage_of), so sums over calls can be checked.
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAKE_TOKEN = "ghp_" + "Zq4v" * 9
THINKING = "THINKING-MARKER"
STALL = "stall"  # the stop reason `respond` gives for a reply that never ends
WRITE_DIR = tempfile.gettempdir()
_count = itertools.count(1)
_released = threading.Event()


def release() -> None:
    """End every stalled reply now (the recorder calls it once the interrupt is done)."""
    _released.set()


def usage_of(n: int) -> dict:
    """Token usage of response n: distinct per response, every field non-zero."""
    return {
        "input_tokens": 100 + n,
        "output_tokens": 20 + n,
        "cache_read_input_tokens": 1000 + 10 * n,
        "cache_creation_input_tokens": 50 + n,
    }


def failing(request: dict) -> bool:
    """Whether the turn's newest text asks for an API failure ([apierr])."""
    messages = request.get("messages") or []
    turn = _turn(messages)
    typed = _typed(messages[turn]) if turn is not None else []
    return bool(typed) and "[apierr]" in typed[-1]


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )


def _is_result(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _typed(message: dict) -> list[str]:
    """The text a person typed into a user message (system reminders left out)."""
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [
        b.get("text", "")
        for b in content or []
        if isinstance(b, dict)
        and b.get("type") == "text"
        and not b.get("text", "").startswith("<system-reminder>")
    ]


def _turn(messages: list) -> int | None:
    """Where the current turn starts: the newest user message that is no tool result."""
    return max(
        (i for i, m in enumerate(messages) if m.get("role") == "user" and not _is_result(m)),
        default=None,
    )


def _blocks(message: dict) -> list[dict]:
    content = message.get("content") if message.get("role") == "user" else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _result_text(block: dict) -> str:
    """A tool result's text: a string, or its text blocks joined."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def _bash(tid: str, command: str) -> dict:
    return {
        "type": "tool_use",
        "id": tid,
        "name": "Bash",
        "input": {"command": command, "description": "run"},
    }


def respond(request: dict) -> tuple[list[dict], str]:
    """The content blocks and stop reason for one request."""
    messages = request.get("messages") or []
    n = next(_count)
    first = _text(messages[0]) if messages else ""
    turn = _turn(messages) or 0
    user = _text(messages[turn]) if messages else ""
    answered = any(_is_result(m) for m in messages[turn:])
    results = [b for m in messages[turn:] for b in _blocks(m) if b.get("type") == "tool_result"]
    if "[recall]" in user and len(results) == 1:  # the search answered: its first hit's proof
        hit = json.loads(_result_text(results[0]))[0]
        return [
            {
                "type": "tool_use",
                "id": f"toolu_v_{n:04d}",
                "name": "mcp__ways__verify_record",
                "input": {"session_id": hit["session_id"], "seq": hit["seq"]},
            }
        ], "tool_use"
    if answered:
        word = "SUBAGENT-DONE" if "SUBTASK" in first else "FINAL-REPLY"
        return [{"type": "text", "text": f"{word} {n}"}], "end_turn"
    if "SUBTASK" in first:
        return [_bash(f"toolu_sub_{n:04d}", "echo from-subagent")], "tool_use"
    if "Do NOT call any tools" in user or ("summar" in user.lower() and "[" not in user):
        return [{"type": "text", "text": f"SUMMARY {n}"}], "end_turn"
    if "[sub]" in user:
        return [
            {"type": "text", "text": "Delegating."},
            {
                "type": "tool_use",
                "id": f"toolu_agent_{n:04d}",
                "name": "Agent",
                "input": {
                    "subagent_type": "general-purpose",
                    "description": "look around",
                    "prompt": "SUBTASK: find the thing",
                },
            },
        ], "tool_use"
    if "[par]" in user:
        return [
            _bash(f"toolu_pa_{n:04d}", "echo par-a"),
            _bash(f"toolu_pb_{n:04d}", "echo par-b"),
        ], "tool_use"
    if "[cut]" in user:
        return [{"type": "text", "text": f"PARTIAL-REPLY {n}"}], STALL
    if "[wait]" in user:
        return [_bash(f"toolu_w_{n:04d}", "sleep 3; echo waited")], "tool_use"
    if "[fail]" in user:
        return [_bash(f"toolu_f_{n:04d}", "echo failing >&2; exit 3")], "tool_use"
    if "[write]" in user:
        return [
            {
                "type": "tool_use",
                "id": f"toolu_w_{n:04d}",
                "name": "Write",
                "input": {
                    "file_path": os.path.join(WRITE_DIR, f"ways-e2e-{n:04d}.txt"),
                    "content": f"written {n}\n",
                },
            }
        ], "tool_use"
    if "[recall]" in user:  # the agent asks ways (`ways mcp`) what it ran before
        return [
            {
                "type": "tool_use",
                "id": f"toolu_r_{n:04d}",
                "name": "mcp__ways__search_history",
                "input": {"query": "git push", "tool_kind": "shell", "limit": 5},
            }
        ], "tool_use"
    if "[secret]" in user:
        return [
            _bash(
                f"toolu_s_{n:04d}",
                f"git push https://x:{FAKE_TOKEN}@example.invalid/r.git 2>/dev/null; echo pushed",
            )
        ], "tool_use"
    return [
        {"type": "thinking", "thinking": f"{THINKING} private plan {n}", "signature": "c2ln"},
        {"type": "text", "text": "Running it."},
        _bash(f"toolu_e_{n:04d}", "echo hello-from-mock"),
    ], "tool_use"


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _stream(blocks: list[dict], stop: str, model: str) -> bytes:
    n = next(_count)
    usage = usage_of(n)
    out = [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_e2e_{n:04d}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {**usage, "output_tokens": 1},
                },
            },
        )
    ]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            start, deltas = (
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": b["text"]}],
            )
        elif b["type"] == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": b["thinking"]},
                {"type": "signature_delta", "signature": b["signature"]},
            ]
        else:
            start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(b["input"])}]
        out.append(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": start},
            )
        )
        out += [
            _sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d})
            for d in deltas
        ]
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _reply(self, body: bytes, ctype: str = "application/json", status: int = 200) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _stall(self, body: bytes) -> None:
        """Send the stream up to its end (message_delta), then hold the connection."""
        head = body[: body.index(b"event: message_delta")]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(head)
        self.wfile.flush()
        _released.wait(30)
        self.close_connection = True

    def do_GET(self):
        self._reply(b"{}")

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            request = json.loads(raw)
        except ValueError:
            request = {}
        if "count_tokens" in self.path:
            return self._reply(b'{"input_tokens": 10}')
        if failing(request):
            body = {"type": "error", "error": {"type": "overloaded_error", "message": "E2E-529"}}
            return self._reply(json.dumps(body).encode(), status=529)
        blocks, stop = respond(request)
        model = request.get("model", "e2e")
        if stop == STALL:
            return self._stall(_stream(blocks, "end_turn", model))
        if request.get("stream"):
            return self._reply(_stream(blocks, stop, model), "text/event-stream")
        body = {
            "id": "msg_e2e",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage_of(next(_count)),
        }
        self._reply(json.dumps(body).encode())


def serve() -> tuple[ThreadingHTTPServer, str]:
    """Start on a free loopback port; returns the server and its base URL."""
    _released.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
