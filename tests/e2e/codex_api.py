"""Our scripted stand-in for the OpenAI Responses API, for the real Codex CLI client.

Codex, given a custom provider (`wire_api = "responses"`) whose base_url is this
server, runs real tools and fires real hooks. Only `POST /v1/responses` matters; it is
answered as a server-sent event stream (response.created ... response.output_item.done
... response.completed). The "model" picks what to do from markers in the turn's user
text (the last user message that is not a `<...>` context block):

    [secret]  one exec_command whose command carries a fake GitHub token
    [par]     two exec_command calls in one response (parallel tool use)
    [fail]    one exec_command that exits 3
    [plain]   a reasoning item (summary THINKING-MARKER ...) and a message, no tool
    [sub]     spawn_agent (Codex's `multi_agent` feature), then wait_agent on it; the
              subagent's task holds [fail]: its one command exits 3
    (none)    a reasoning item, a message and exec_command `echo hello-from-codex`
Every first response of a turn carries a reasoning item, whose summary Codex stores in
its rollout; after function call outputs the answer is `FINAL-REPLY <n>`.
"""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAKE_TOKEN = "ghp_" + "Zq4v" * 9
THINKING = "THINKING-MARKER"
AGENTS = {"namespace": "multi_agent_v1"}  # where Codex's subagent tools are (its `[features]`)


def _text(item: dict) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return " ".join(c.get("text", "") for c in content or [] if isinstance(c, dict))


def plan(request: dict, n: int) -> list[dict]:
    """The output items of the next response."""
    items = request.get("input") or []
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    users = [
        i
        for i, it in enumerate(items)
        if it.get("type", "message") == "message"
        and it.get("role") == "user"
        and not _text(it).lstrip().startswith("<")
    ]
    start = users[-1] if users else 0
    text = _text(items[start]) if items else ""

    def shell(command: str, tag: str) -> dict:
        args = json.dumps({"cmd": command, "yield_time_ms": 10000})
        return {
            "type": "function_call",
            "id": f"fc_{tag}_{n:04d}",
            "call_id": f"call_{tag}_{n:04d}",
            "name": "exec_command",
            "arguments": args,
            "status": "completed",
        }

    def message(body: str) -> dict:
        return {
            "type": "message",
            "id": f"msg_{n:04d}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": body, "annotations": []}],
        }

    reasoning = {
        "type": "reasoning",
        "id": f"rs_{n:04d}",
        "summary": [{"type": "summary_text", "text": f"{THINKING} private plan {n}"}],
    }
    outputs = [
        it
        for it in items[start:]
        if it.get("type") in ("function_call_output", "custom_tool_call_output")
    ]
    if "[sub]" in text and len(outputs) == 1:  # the agent is spawned: wait for it
        agent = _agent_id(outputs[0])
        args = json.dumps({"targets": [agent] if agent else [], "timeout_ms": 60000})
        return [_agents_call("wait_agent", "wait", n, args)]
    if outputs:
        return [message(f"FINAL-REPLY {n}")]
    if "[sub]" in text:
        args = json.dumps({"message": f"SUBTASK {n}: [fail] run the check"})
        return [reasoning, message("Delegating."), _agents_call("spawn_agent", "sub", n, args)]
    if "[secret]" in text:
        push = f"git push https://x:{FAKE_TOKEN}@example.invalid/r.git 2>/dev/null; echo pushed"
        return [reasoning, message("Pushing."), shell(push, "s")]
    if "[par]" in text:
        return [reasoning, shell("echo par-a", "pa"), shell("echo par-b", "pb")]
    if "[fail]" in text:
        return [reasoning, message("Trying it."), shell("echo failing >&2; exit 3", "f")]
    if "[plain]" in text:
        return [reasoning, message(f"PLAIN-REPLY {n}")]
    return [reasoning, message("Running it."), shell("echo hello-from-codex", "e")]


def _agents_call(name: str, tag: str, n: int, args: str) -> dict:
    """A call of one of Codex's subagent tools (their namespace named)."""
    return {"type": "function_call", "id": f"fc_{tag}_{n:04d}", "call_id": f"call_{tag}_{n:04d}",
            "name": name, "arguments": args, "status": "completed", **AGENTS}  # fmt: skip


def _agent_id(output: dict) -> str | None:
    """The agent id a spawn_agent call's output names (JSON text, or a plain id)."""
    body = output.get("output")
    text = body if isinstance(body, str) else json.dumps(body)
    try:
        found = json.loads(text)
    except ValueError:
        return text.strip() or None
    if isinstance(found, dict):
        for key in ("agent_id", "id", "target"):
            if isinstance(found.get(key), str):
                return found[key]
    return None


def _event(data: dict) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def stream(items: list[dict], model: str, n: int) -> bytes:
    base = {"id": f"resp_{n:04d}", "object": "response", "model": model, "output": []}
    out = [
        _event({"type": "response.created", "response": {**base, "status": "in_progress"}}),
        _event({"type": "response.in_progress", "response": {**base, "status": "in_progress"}}),
    ]
    for i, item in enumerate(items):
        added = {**item, "status": "in_progress"}
        if item["type"] == "message":
            added["content"] = []
        elif item["type"] == "reasoning":
            added["summary"] = []
        else:
            added["arguments"] = ""
        out.append(_event({"type": "response.output_item.added", "output_index": i, "item": added}))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            ids = {"item_id": item["id"], "output_index": i, "content_index": 0}
            out.append(_event({"type": "response.output_text.delta", **ids, "delta": text}))
            out.append(_event({"type": "response.output_text.done", **ids, "text": text}))
        elif item["type"] == "reasoning":
            delta = item["summary"][0]["text"]
            ids = {"item_id": item["id"], "output_index": i, "summary_index": 0}
            out.append(
                _event({"type": "response.reasoning_summary_text.delta", **ids, "delta": delta})
            )
        else:
            ids = {"item_id": item["id"], "output_index": i}
            out.append(
                _event(
                    {
                        "type": "response.function_call_arguments.delta",
                        **ids,
                        "delta": item["arguments"],
                    }
                )
            )
        out.append(_event({"type": "response.output_item.done", "output_index": i, "item": item}))
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 30,
    }
    done = {**base, "status": "completed", "output": items, "usage": usage}
    out.append(_event({"type": "response.completed", "response": done}))
    return b"".join(out)


def handler(count: itertools.count) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _reply(self, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(200)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            models = b'{"object": "list", "data": [], "models": []}'
            self._reply(models if "/models" in self.path else b"{}")

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                request = json.loads(raw)
            except ValueError:
                request = {}
            if not self.path.rstrip("/").endswith("/responses"):
                return self._reply(b"{}")
            n = next(count)
            items = plan(request, n)
            self._reply(stream(items, request.get("model", "mock"), n), "text/event-stream")

    return Handler


def serve() -> tuple[ThreadingHTTPServer, str]:
    """A running server on a free loopback port, and the provider's base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(itertools.count(1)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"
