"""One real Claude Code process held open for a whole session, the way a person uses it.

`harness.run` starts one `claude -p` process per prompt (each turn its own SessionStart
and SessionEnd). A Conversation instead keeps one client running with
`--input-format stream-json`: prompts go in as JSON lines on stdin, the client's events
come back on stdout, and `interrupt()` sends the control request the Agent SDK sends
when its user presses Esc. That is what a real interrupted reply needs: the client cuts
the stalled reply (`[cut]` in messages_api) short and writes `[Request interrupted by
user]` to the transcript, with no Stop event.

Every wait is bounded; the client's stdout is kept in `<root>/client.jsonl` for reading
after a failure.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from . import harness, messages_api


class Conversation:
    """The real client on stream-json stdin/stdout, against the scripted Messages API."""

    def __init__(self, s: harness.Session, timeout: float = 120, ask: bool = False) -> None:
        """`ask`: the client asks us about a tool its allow list leaves out (the Agent
        SDK's permission prompt on stdio, `can_use_tool`), and we answer yes, as a person
        at the prompt would."""
        self.s = s
        self.timeout = timeout
        self.lock = threading.Lock()
        self.server, url = messages_api.serve()
        self.log = open(s.root / "client.jsonl", "w")  # noqa: SIM115 (closed in close())
        self.stderr = open(s.root / "client.stderr", "w")  # noqa: SIM115
        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.proc = subprocess.Popen(
            [
                harness.claude_bin(),
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--allowedTools",
                "Bash",
                "Agent",
                *(["--permission-prompt-tool", "stdio"] if ask else []),
            ],
            cwd=s.project,
            env=harness.client_env(s, url),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            bufsize=1,
        )
        self.asked: list[dict[str, Any]] = []  # the permission prompts answered
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.requests = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.log.write(line)
            self.log.flush()
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                req = obj.get("request") if obj.get("type") == "control_request" else None
                if isinstance(req, dict) and req.get("subtype") == "can_use_tool":
                    self.asked.append(obj)
                    answer = {"behavior": "allow", "updatedInput": req.get("input") or {}}
                    done = {"subtype": "success", "request_id": obj.get("request_id")}
                    self._send(
                        {"type": "control_response", "response": {**done, "response": answer}}
                    )
                    continue
                if obj.get("session_id"):
                    self.s.session_id = obj["session_id"]
                self.events.put(obj)
        self.events.put(None)

    def _send(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        with self.lock:  # the reader thread answers permission prompts
            self.proc.stdin.write(json.dumps(obj) + "\n")
            self.proc.stdin.flush()

    def _until(self, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        end = time.monotonic() + self.timeout
        while (left := end - time.monotonic()) > 0:
            try:
                obj = self.events.get(timeout=left)
            except queue.Empty:
                break
            if obj is None:
                raise RuntimeError(f"claude exited (code {self.proc.poll()}); see client.jsonl")
            if pred(obj):
                return obj
        raise RuntimeError("claude did not answer in time; see client.jsonl")

    def prompt(self, text: str) -> None:
        """Type a prompt (and press Enter); returns at once."""
        self._send(
            {
                "type": "user",
                "message": {"role": "user", "content": text},
                "parent_tool_use_id": None,
                "session_id": "",
            }
        )

    def say(self, text: str) -> dict[str, Any]:
        """One prompt and its turn; returns the client's result event."""
        self.prompt(text)
        return self.result()

    def result(self) -> dict[str, Any]:
        """Wait for the end of the running turn."""
        return self._until(lambda o: o.get("type") == "result")

    def interrupt_reply(self, text: str) -> dict[str, Any]:
        """A prompt whose reply stalls after its first text block (`[cut]`), interrupted
        once the client has shown that block."""
        self.prompt(text)
        self._until(lambda o: o.get("type") == "assistant")
        self.requests += 1
        self._send(
            {
                "type": "control_request",
                "request_id": f"interrupt-{self.requests}",
                "request": {"subtype": "interrupt"},
            }
        )
        try:
            return self.result()
        finally:
            messages_api.release()

    def until_sent(self, want: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Wait until a hook payload the client sent satisfies `want` (the raw recorder's
        file is the ground truth), and return it."""
        end = time.monotonic() + self.timeout
        while time.monotonic() < end:
            for t in self.s.truth():
                if want(t):
                    return t
            time.sleep(0.2)
        raise RuntimeError(f"the client sent no such hook payload within {self.timeout} s")

    def close(self) -> int:
        """End the session as a user closing the client does: stdin closes, SessionEnd."""
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
            return self.proc.wait(self.timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            messages_api.release()
            self.server.shutdown()
            self.server.server_close()
            self.reader.join(10)  # the client is gone: its stdout ends
            if not self.reader.is_alive():
                self.log.close()
                if self.proc.stdout:
                    self.proc.stdout.close()
            self.stderr.close()
