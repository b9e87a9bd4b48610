"""Session files that are no regular file (issue 22, defects 2 and 7), through the hook as
wired and the detached dispatcher it starts.

A payload names the agent's session file, so an agent (or anyone who can shape its
payload) can name a FIFO, a device, a folder or a path that cannot be opened. The
dispatcher must never wait on one (a FIFO opened for reading blocks until a writer
comes: the session's dispatcher would hold `dispatch.lock` forever and nothing of the
session would be delivered again), and it must build what the payload itself holds.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from ..conftest import LAUNCHER, Install
from ..helpers import wait_until


def records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def logged(install: Install, kind: str) -> list[dict]:
    path = install.state_root / "events.log"
    if not path.exists():
        return []
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [e for e in lines if e["kind"] == kind]


def hook(install: Install, agent: str, payload: dict) -> None:
    import subprocess

    from ways_sensors.commands.reconcile import hook_command

    argv = ["sh", "-c", hook_command(sys.executable, str(LAUNCHER), agent)]
    r = subprocess.run(
        argv,
        env=install.env,
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=60,
        cwd=install.project,
    )
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b""), r


def everything(out: Path) -> str:
    return (
        "rules:\n"
        "  all:\n"
        "    sections: [session_start, user_prompt, tool_call, tool_result,"
        " assistant_response, compaction, session_end]\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n"
    )


def test_a_gemini_precompress_naming_a_fifo_never_hangs_the_dispatcher(install, tmp_path):
    """Defect 2: a PreCompress whose transcript_path is a FIFO; every later event of the
    session is still delivered, and the dispatcher exits at the session's end."""
    out = tmp_path / "out.jsonl"
    install.sensor("all", everything(out))
    fifo = tmp_path / "chat.jsonl"
    os.mkfifo(fifo)
    sid = "gemini-fifo-1"
    base = {"session_id": sid, "cwd": str(install.project), "transcript_path": str(fifo)}
    hook(install, "gemini", {**base, "hook_event_name": "SessionStart", "source": "startup"})
    hook(install, "gemini", {**base, "hook_event_name": "PreCompress", "trigger": "manual"})
    hook(install, "gemini", {**base, "hook_event_name": "BeforeAgent", "prompt": "after it"})
    hook(install, "gemini", {**base, "hook_event_name": "SessionEnd", "reason": "exit"})
    sections = lambda: [r["section"] for r in records(out)]  # noqa: E731
    assert wait_until(lambda: "session_end" in sections(), timeout=60), sections()
    assert sections()[0] == "session_start" and "user_prompt" in sections()
    prompt = next(r for r in records(out) if r["section"] == "user_prompt")
    assert prompt["data"]["prompt"] == "after it"
    # the session is over: its dispatcher left, its folder with it
    assert wait_until(lambda: not (install.sessions() / sid).exists(), timeout=60)


@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "nul", "denied"])
def test_codex_with_an_unreadable_rollout_still_builds_from_the_payload(install, tmp_path, kind):
    """Defect 7: a rollout path that is a FIFO, a device, a folder, holds a NUL or cannot
    be opened: logged, and every record the payload holds is still built and delivered
    (as for Claude Code), not only the session's failure status."""
    out = tmp_path / "out.jsonl"
    install.sensor("all", everything(out))
    rollout = tmp_path / "rollout.jsonl"
    if kind == "fifo":
        os.mkfifo(rollout)
        path = str(rollout)
    elif kind == "device":
        path = "/dev/zero"
    elif kind == "folder":
        path = str(tmp_path)
    elif kind == "nul":
        path = str(rollout) + "\0.jsonl"
    else:
        rollout.write_text('{"type":"session_meta","payload":{}}\n')
        rollout.chmod(0)
        path = str(rollout)
        if os.geteuid() == 0:  # root reads anything: a path through a file instead
            path = str(rollout) + "/child.jsonl"
    sid = f"codex-{kind}-1"
    base = {"session_id": sid, "cwd": str(install.project), "transcript_path": path}
    call = {"tool_name": "Bash", "tool_use_id": "call_1", "tool_input": {"command": "ls"}}
    hook(install, "codex", {**base, "hook_event_name": "SessionStart", "source": "startup"})
    hook(install, "codex", {**base, "hook_event_name": "UserPromptSubmit", "prompt": "list it"})
    hook(install, "codex", {**base, "hook_event_name": "PreToolUse", **call})
    hook(
        install,
        "codex",
        {**base, "hook_event_name": "PostToolUse", **call, "tool_response": "a b c"},
    )
    hook(install, "codex", {**base, "hook_event_name": "Stop", "last_assistant_message": "done"})
    hook(install, "codex", {**base, "hook_event_name": "SessionEnd", "reason": "exit"})
    sections = lambda: [r["section"] for r in records(out)]  # noqa: E731
    assert wait_until(lambda: "session_end" in sections(), timeout=60), sections()
    got = sections()
    for section in ("session_start", "user_prompt", "tool_call", "tool_result"):
        assert section in got, (section, got)
    assert "assistant_response" in got, got
    result = next(r for r in records(out) if r["section"] == "tool_result")
    assert result["data"]["tool_use_id"] == "call_1"
    assert not logged(install, "dispatch.build_error"), logged(install, "dispatch.build_error")
