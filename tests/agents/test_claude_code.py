"""The Claude Code adapter behind the registry: the hook's `--agent`, the spool's agent
field (and entries from before it), the build cursor's tracker, and events the builder
does not know (defect 4: `getattr(self, "_" + event)` reached private helpers)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from ways_sensors.agents.claude_code.builder import Builder
from ways_sensors.agents.claude_code.tracker import Tracker
from ways_sensors.state import spool

from ..conftest import LAUNCHER, everything_sensor, payload
from ..helpers import PY, SID, dispatcher_lock, entries, lines

# names of the builder's own attributes and the old private handlers' helpers
NOT_EVENTS = ["line", "sync", "queued", "queue_operation", "recovered", "fast_forward",
              "stop", "build", "state", "__init__", "__class__", "WaysFire", ""]  # fmt: skip


@pytest.mark.parametrize("event", NOT_EVENTS)
def test_the_builder_knows_only_its_table(event):
    p = {**payload("PreToolUse"), "hook_event_name": event}
    assert Builder().build(event, p, 1) == []
    assert Builder(transcript=False).build(event, p, 1) == []


@pytest.mark.parametrize("event", ["line", "queue_operation", "sync", "stop"])
def test_fire_with_a_helper_name_as_event_says_so_in_one_line(install, tmp_path, event):
    install.sensor(
        "probe",
        f"rules:\n  r:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
    )
    src = tmp_path / "in.json"
    src.write_text(json.dumps({**payload("PreToolUse"), "hook_event_name": event}))
    r = install.ways("sensors", "fire", "probe/r", "--section", "tool_call", "--input", str(src))
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    assert r.stderr.splitlines() == [f"ways: {event!r} is not a hook event claude-code sends"]
    assert not (tmp_path / "o").exists()


def hook_with(install, data: dict, *args: str, console: bool = False):
    if console:
        argv = [os.path.join(os.path.dirname(PY), "ways"), "hook", "sensors", *args]
    else:
        argv = [PY, "-S", str(LAUNCHER), "hook", "sensors", *args]
    return subprocess.run(
        argv, input=json.dumps(data).encode(), capture_output=True, env=install.env, timeout=60
    )


@pytest.mark.parametrize("console", [False, True])
def test_agent_flag_names_the_adapter_in_the_spool(install, tmp_path, console):
    install.sensor("all", everything_sensor(tmp_path / "o"))
    with dispatcher_lock(install):
        for args in ([], ["--agent", "claude-code"], ["--agent=claude-code"]):
            r = hook_with(install, payload("PreToolUse"), *args, console=console)
            assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        got = entries(install)
    assert [(e.event, e.agent) for e in got] == [("PreToolUse", "claude-code")] * 3
    raw = b"".join(p.read_bytes() for p in (install.sessions() / SID / "spool").glob("*.seg"))
    assert raw.count(b'"agent":"claude-code"') == 3


@pytest.mark.parametrize("console", [False, True])
@pytest.mark.parametrize(
    "args, kind",
    [
        (["--agent", "no-such-agent"], "hook.unknown_agent"),
        (["--agent", "../../etc/passwd"], "hook.unknown_agent"),
        (["--agent"], "hook.bad_arguments"),
        (["--bogus", "x"], "hook.bad_arguments"),
    ],
)
def test_unknown_agent_or_argument_exits_zero_silently(install, tmp_path, console, args, kind):
    install.sensor("all", everything_sensor(tmp_path / "o"))
    secret = "my password is hunter2"
    r = hook_with(
        install, {**payload("UserPromptSubmit"), "prompt": secret}, *args, console=console
    )
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert not install.sessions().exists()  # nothing spooled
    log = (install.state_root / "events.log").read_text()
    [line] = log.splitlines()
    event = json.loads(line)
    assert event["kind"] == kind
    assert "hunter2" not in log and "passwd" not in log
    if kind == "hook.unknown_agent":
        assert event["agent"] in ("no-such-agent", "?")


def old_frame(event: str, ts_ns: int, project: str, data: bytes) -> bytes:
    """A spool frame as written before entries named their agent."""
    head = json.dumps(
        {"event": event, "ts_ns": ts_ns, "project": project, "pid": 1, "transcript_size": -1}
    ).encode()
    body = head + b"\n" + data
    return b"WS1 " + str(len(body)).encode() + b"\n" + body + b"\n"


def test_entries_without_an_agent_are_read_and_built_as_claude_code(install, tmp_path):
    out = tmp_path / "o.jsonl"
    install.sensor("all", everything_sensor(out))
    project = str(install.project)
    with dispatcher_lock(install):
        install.hook(payload("SessionStart"))  # a new-format entry first
        seg = next((install.sessions() / SID / "spool").glob("*.seg"))
        with open(seg, "ab") as f:
            for i, name in enumerate(["UserPromptSubmit", "PreToolUse", "SessionEnd"]):
                data = json.dumps(payload(name)).encode()
                f.write(old_frame(payload(name)["hook_event_name"], 10**18 + i, project, data))
        got = entries(install)
    assert [e.agent for e in got] == ["claude-code"] * 4
    r = subprocess.run(
        [PY, "-S", str(LAUNCHER), "sensors", "dispatch", "--session", SID, "--idle", "5"],
        env=install.env,
        capture_output=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    recs = lines(out)
    assert [r["section"] for r in recs] == [
        "session_start",
        "user_prompt",
        "tool_call",
        "session_end",
    ]
    assert recs[2]["data"]["tool_name"] == "Bash"
    assert not (install.sessions() / SID).exists()  # SessionEnd ended it, as before


def test_a_build_cursor_from_before_agents_keeps_its_tracker(install, tmp_path):
    """`tracker` (one, Claude Code's) in an old build.json is read as claude-code's."""
    out = tmp_path / "o.jsonl"
    install.sensor("all", everything_sensor(out))
    with dispatcher_lock(install):
        install.hook(payload("SubagentStop"))
        old = {
            "project": str(install.project),
            "spool": ["0000000001.seg", 0],
            "journal": ["0000000001.seg", 0],
            "seq": 7,
            "ended": False,
            # a session already started, that saw no SubagentStart for this agent
            "tracker": Tracker(started=True).to_json(),
        }
        (install.sessions() / SID / "build.json").write_text(json.dumps(old))
    r = subprocess.run(
        [PY, "-S", str(LAUNCHER), "sensors", "dispatch", "--session", SID, "--idle", "0.5"],
        env=install.env,
        capture_output=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    recs = lines(out)
    assert [(r["section"], r["seq"]) for r in recs] == [("subagent", 8), ("assistant_response", 9)]
    # with a fresh tracker this would be "Explore": the old tracker was carried over
    assert recs[1]["agent_type"] == "internal"
    build = json.loads((install.sessions() / SID / "build.json").read_text())
    assert "tracker" not in build and set(build["trackers"]) == {"claude-code"}
    assert Tracker.from_json(build["trackers"]["claude-code"]).started is True


def test_spool_frames_round_trip_the_agent():
    body = spool.frame("tool", 5, "/p", b"{}", -1, "toy")
    [(_, _, inner)] = list(spool.scan_frames(body))
    e = spool.parse_entry(inner)
    assert (e.event, e.agent, e.ts_ns, e.project, e.payload) == ("tool", "toy", 5, "/p", b"{}")
    bad = inner.replace(b'"agent":"toy"', b'"agent":7')
    assert spool.parse_entry(bad) is None  # a header that names no agent name is corrupt


def test_reconcile_agent_claude_code_is_the_default(install, tmp_path):
    path = install.home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    spelled = f"{PY} -S {LAUNCHER} hook sensors --agent claude-code"  # ours, hand-written
    path.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"command": spelled}]}]}}))
    assert install.ways("reconcile", "--agent", "claude-code").returncode == 0
    explicit = path.read_bytes()
    stop = json.loads(explicit)["hooks"]["Stop"]
    assert len(stop) == 1 and len(stop[0]["hooks"]) == 1  # replaced in place, not added
    assert stop[0]["hooks"][0]["command"].endswith(f"{LAUNCHER} hook sensors")
    r = install.ways("reconcile")
    assert "nothing to change" in r.stdout and path.read_bytes() == explicit
