"""A Stop is built from the transcript as the hook saw it, however late the dispatcher.

The hook notes the transcript's size with every event whose record reads the transcript;
the builder reads up to that size. Before, a Stop read the transcript to its current end:
a dispatcher that started late (or restarted, or lagged under load) found the NEXT turn
already written, gave the Stop that turn's usage and exported its own reply a second time,
marked interrupted. Here a scripted client writes turn 2 before any dispatcher runs, then
the real dispatcher builds both turns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import LAUNCHER, Install
from .helpers import dispatcher_alive, dispatcher_lock, lines, wait_until

SID = "0b4c3f1e-5a6d-4e7f-8a9b-stoplag00001"


def line(kind: str, n: int, **fields) -> bytes:
    obj = {"type": kind, "uuid": f"{kind}-{n}", "sessionId": SID,
           "timestamp": f"2026-11-29T10:00:{n:02d}.000Z", **fields}  # fmt: skip
    return json.dumps(obj).encode() + b"\n"


def turn(n: int) -> tuple[bytes, bytes]:
    """One whole turn: the prompt and a first API call (a tool use), then the reply's
    last call, which ends it (the client may write that one just after the Stop hook)."""
    prompt = line("user", 10 * n, message={"role": "user", "content": f"question {n}"})
    first = {"role": "assistant", "id": f"msg_{n}a", "model": f"model-{n}",
             "stop_reason": "tool_use", "content": [{"type": "tool_use", "id": f"t{n}",
             "name": "Bash", "input": {"command": "true"}}],
             "usage": {"input_tokens": 60 * n, "output_tokens": 6 * n}}  # fmt: skip
    last = {"role": "assistant", "id": f"msg_{n}b", "model": f"model-{n}",
            "stop_reason": "end_turn", "content": [{"type": "text", "text": f"answer {n}"}],
            "usage": {"input_tokens": 40 * n, "output_tokens": 4 * n}}  # fmt: skip
    head = prompt + line("assistant", 10 * n + 1, message=first)
    return head, line("assistant", 10 * n + 2, message=last)


@pytest.mark.parametrize("last_call", ["before the hook", "after the hook"])
def test_a_late_dispatcher_gives_each_stop_its_own_turn(tmp_path: Path, last_call: str):
    install = Install(tmp_path)
    out = tmp_path / "r.jsonl"
    install.sensor(
        "s",
        f"rules:\n  r:\n    sections: [user_prompt, assistant_response]\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    transcript = tmp_path / "t" / f"{SID}.jsonl"
    transcript.parent.mkdir()
    transcript.write_bytes(b"")
    base = {"session_id": SID, "transcript_path": str(transcript), "cwd": str(install.project)}

    def hook(event: str, **fields) -> None:
        r = install.hook({**base, "hook_event_name": event, **fields})
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")

    with dispatcher_lock(install, SID):  # the dispatcher has not started yet
        hook("SessionStart", source="startup", model="model-1")
        for n in (1, 2):  # turn 2 is on disk before anything built Stop 1
            hook("UserPromptSubmit", prompt=f"question {n}", prompt_id=f"p{n}")
            head, last = turn(n)
            with transcript.open("ab") as f:
                f.write(head + (last if last_call == "before the hook" else b""))
            hook("Stop", last_assistant_message=f"answer {n}", stop_hook_active=False)
            if last_call == "after the hook":
                with transcript.open("ab") as f:
                    f.write(last)
    r = subprocess.run(
        [sys.executable, "-S", str(LAUNCHER), "sensors", "dispatch", "--session", SID,
         "--idle", "0.5"],
        env=install.env, capture_output=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert wait_until(lambda: not dispatcher_alive(install, SID))
    replies = [x for x in lines(out) if x["section"] == "assistant_response"]
    got = [
        (x["hook_event"], x["data"]["text"], x["data"].get("interrupted", False),
         x["data"]["model"], (x["data"]["usage"] or {}).get("input_tokens"))
        for x in replies
    ]  # fmt: skip
    assert got == [  # both calls of each turn, and nothing of the other
        ("Stop", "answer 1", False, "model-1", 100),
        ("Stop", "answer 2", False, "model-2", 200),
    ]
