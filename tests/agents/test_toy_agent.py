"""A second agent through the seam: the toy adapter (tests/agents/toy/), registered by
one line (tests/agents/with_toy.py), is served by the real hook, dispatcher and
`ways reconcile` with no other change, beside Claude Code in the same session."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ways_sensors import agents
from ways_sensors.agents import protocols

from ..conftest import everything_sensor, payload
from ..helpers import PY, SID, dispatcher_lock, entries, lines
from . import toy
from .toy import adapter as toy_adapter

WITH_TOY = Path(__file__).with_name("with_toy.py")


def with_toy(install, *args: str, data: bytes | None = None, env: dict | None = None):
    return subprocess.run(
        [PY, str(WITH_TOY), *args],
        input=data,
        capture_output=True,
        env=env or install.env,
        timeout=60,
    )


def toy_event(install, event: str, **fields) -> None:
    body = json.dumps({"event": event, "conversation": SID, **fields}).encode()
    env = {**install.env, "TOY_PROJECT_DIR": str(install.project / "toy")}
    r = with_toy(install, "hook", "sensors", "--agent", "toy", data=body, env=env)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def dispatch(install) -> None:
    r = with_toy(install, "sensors", "dispatch", "--session", SID, "--idle", "0.5")
    assert r.returncode == 0, r.stderr


def test_the_toy_satisfies_both_protocols():
    assert isinstance(toy.FACE, protocols.Face) and isinstance(toy_adapter, protocols.Adapter)
    assert "toy" not in agents.AGENTS  # registered only where with_toy.py runs


def test_toy_and_claude_code_entries_of_one_session_each_build_with_their_adapter(
    install, tmp_path
):
    out = tmp_path / "o.jsonl"
    install.sensor("all", everything_sensor(out))
    with dispatcher_lock(install):
        toy_event(install, "begin")
        toy_event(install, "tool", cmd="make test")
        toy_event(install, "ignored-by-the-face")  # no sections: never spooled
        install.hook(payload("PreToolUse"))  # Claude Code, the same session id
        got = entries(install)
    assert [(e.agent, e.event) for e in got] == [
        ("toy", "begin"),
        ("toy", "tool"),
        ("claude-code", "PreToolUse"),
    ]
    assert got[0].project == str(install.project / "toy")  # the toy's project variable
    assert got[2].project == str(install.project)  # Claude Code's

    dispatch(install)  # exits idle: the session has not ended
    build = json.loads((install.sessions() / SID / "build.json").read_text())
    assert json.loads(build["trackers"]["toy"]) == {"calls": 1}

    with dispatcher_lock(install):
        toy_event(install, "tool", cmd="git push")
        toy_event(install, "end")
    dispatch(install)  # a new dispatcher: the toy builder resumes from its saved state
    recs = lines(out)
    assert [(r["hook_event"], r["section"], r["seq"]) for r in recs] == [
        ("begin", "session_start", 1),
        ("tool", "tool_call", 2),
        ("PreToolUse", "tool_call", 3),
        ("tool", "tool_call", 4),
        ("end", "session_end", 5),
    ]
    assert [r["data"].get("n") for r in recs if r["hook_event"] == "tool"] == [1, 2]
    assert recs[2]["data"]["tool_name"] == "Bash"
    end = dict(recs[4]["data"])
    assert end.pop("cost")["replies"] == 0  # every session_end carries the session's cost
    assert end == {"calls": 2}
    assert not (install.sessions() / SID).exists()  # the toy's end event ended the session


def test_a_dispatcher_that_does_not_know_an_agent_skips_its_entries_and_says_so(install, tmp_path):
    out = tmp_path / "o.jsonl"
    install.sensor("all", everything_sensor(out))
    with dispatcher_lock(install):
        toy_event(install, "tool", cmd="ls")
        install.hook(payload("UserPromptSubmit"))
    r = subprocess.run(  # the plain `ways`: no toy in its registry
        [str(Path(PY).parent / "ways"), "sensors", "dispatch", "--session", SID, "--idle", "0.5"],
        capture_output=True,
        env=install.env,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert [r["section"] for r in lines(out)] == ["user_prompt"]
    log = [json.loads(x) for x in (install.state_root / "events.log").read_text().splitlines()]
    assert {"kind": "dispatch.unknown_agent", "hook_event": "tool"}.items() <= next(
        e for e in log if e["kind"] == "dispatch.unknown_agent"
    ).items()


def test_reconcile_wires_the_toy_where_and_how_its_adapter_says(install):
    path = install.home / ".toy" / "hooks.json"
    path.parent.mkdir()
    theirs = {"version": 1, "hooks": {"tool": [{"command": "their-guard.sh"}]}, "keep": True}
    path.write_text(json.dumps(theirs, indent=2) + "\n")
    r = with_toy(install, "reconcile", "--agent", "toy")
    assert r.returncode == 0, r.stderr
    assert b"wired on 3 events" in r.stdout
    once = path.read_bytes()
    data = json.loads(once)
    assert data["keep"] is True and data["hooks"]["tool"][0] == {"command": "their-guard.sh"}
    for event in toy_adapter.WIRED_EVENTS:
        [ours] = [h for h in data["hooks"][event] if "hook sensors" in h["command"]]
        assert " -S " in ours["command"] and "_launch.py" in ours["command"]
        assert ours["command"].endswith("hook sensors --agent toy")
    again = with_toy(install, "reconcile", "--agent", "toy")
    assert b"nothing to change" in again.stdout and path.read_bytes() == once
    assert not (install.home / ".claude").exists()  # Claude Code's settings untouched
    assert with_toy(install, "reconcile", "--agent", "toy", "--remove").returncode == 0
    assert json.loads(path.read_text()) == theirs


def test_reconcile_refuses_an_agent_it_does_not_know(install):
    r = install.ways("reconcile", "--agent", "toy")
    assert r.returncode == 2
    assert r.stderr.splitlines() == [
        "ways: no agent 'toy'; one of claude-code, codex, copilot, cursor, gemini"
    ]
    assert not (install.home / ".claude").exists() and not (install.home / ".toy").exists()
