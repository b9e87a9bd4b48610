"""`ways hook sensors` as Claude Code runs it: a subprocess with JSON on stdin."""

from __future__ import annotations

import ast
import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ways_sensors.agents.claude_code.builder import Builder

from .conftest import LAUNCHER, PAYLOADS, everything_sensor, payload
from .helpers import FORBIDDEN, dispatcher_lock, entries, modules_on_path

SID = payload("SessionStart")["session_id"]  # the recorded session's
HOOK_EVENTS = [  # the recorded payloads, in the order the real session sent such events
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "SubagentStart",
    "PreToolUse-in-subagent",
    "PostToolUse-in-subagent",
    "SubagentStop",
    "Stop",
    "PreCompact",
    "SubagentStop-internal",
    "SessionStart-compact",
    "SessionEnd",
]


def all_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_no_rule_selects_nothing_written_nothing_printed(install):
    for name in HOOK_EVENTS:
        r = install.hook((PAYLOADS / f"{name}.json").read_bytes())
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert not install.state_root.exists()
    assert list((install.root / "cache").rglob("*.idx"))  # only the compiled index


def test_replay_recorded_payloads_yields_the_section_table(install, tmp_path):
    install.sensor("all", everything_sensor(tmp_path / "out.jsonl"))
    with dispatcher_lock(install):
        for name in HOOK_EVENTS:
            r = install.hook((PAYLOADS / f"{name}.json").read_bytes())
            assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        got = entries(install)
    assert [e.event for e in got] == [payload(n)["hook_event_name"] for n in HOOK_EVENTS]
    for e, name in zip(got, HOOK_EVENTS, strict=True):
        assert e.payload == (PAYLOADS / f"{name}.json").read_bytes()
        assert e.project == str(install.project)
    stamps = [e.ts_ns for e in got]
    assert stamps == sorted(stamps)

    builder = Builder()
    records = []
    for e in got:
        records += builder.build(e.event, json.loads(e.payload), e.ts_ns)
    sections = [(d.hook_event, d.section) for d in records]
    assert sections == [
        ("SessionStart", "session_start"),
        ("UserPromptSubmit", "user_prompt"),
        ("PreToolUse", "tool_call"),
        ("PostToolUse", "tool_result"),
        ("PostToolUseFailure", "tool_result"),
        ("SubagentStart", "subagent"),
        ("PreToolUse", "tool_call"),
        ("PostToolUse", "tool_result"),
        ("SubagentStop", "subagent"),
        ("SubagentStop", "assistant_response"),
        ("Stop", "assistant_response"),
        ("PreCompact", "compaction"),
        ("SubagentStop", "subagent"),
        ("SubagentStop", "assistant_response"),
        ("SessionStart", "session_start"),
        ("SessionStart", "compaction"),
        ("SessionEnd", "session_end"),
    ]
    call, sent = records[2], payload("PreToolUse")
    assert call.data["tool_name"] == "Bash"
    assert call.data["input"] == sent["tool_input"]
    assert call.data["tool_use_id"] == sent["tool_use_id"]
    assert (call.agent_id, call.agent_type) == (None, "main")
    assert call.prompt_id == sent["prompt_id"]
    assert call.data["extra"]["cwd"] == sent["cwd"]
    failed = records[4]
    assert failed.data["status"] == "failure" and failed.data["error"].startswith("Exit code 3")
    inside, start = records[6], payload("SubagentStart")
    assert (inside.agent_id, inside.agent_type) == (start["agent_id"], start["agent_type"])
    assert records[9].data["text"] == payload("SubagentStop")["last_assistant_message"]
    assert records[10].data["text"] == payload("Stop")["last_assistant_message"]
    compact = records[11]
    assert compact.data["phase"] == "before" and compact.data["trigger"] == "manual"
    assert compact.data["instructions"] == payload("PreCompact")["custom_instructions"]
    assert records[12].agent_type == records[13].agent_type == "internal"
    assert records[14].data["source"] == "compact"
    assert records[14].data["model"] == payload("SessionStart-compact")["model"]
    assert (records[15].data["phase"], records[15].data["trigger"]) == ("after", "manual")
    assert records[16].data["reason"] == payload("SessionEnd")["reason"]


def test_session_start_compact_gives_compaction_after(install, tmp_path):
    install.sensor(
        "c",
        f"rules:\n  c:\n    sections: [compaction]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
    )
    start = payload("SessionStart")
    with dispatcher_lock(install):
        install.hook(start)  # startup: no compaction section, nothing spooled
        assert not entries(install)
        install.hook(payload("PreCompact"))
        install.hook({**start, "source": "compact"})
        got = entries(install)
    assert [e.event for e in got] == ["PreCompact", "SessionStart"]
    b = Builder()
    drafts = [d for e in got for d in b.build(e.event, json.loads(e.payload), e.ts_ns)]
    compaction = [d.data for d in drafts if d.section == "compaction"]
    assert [(c["phase"], c["trigger"]) for c in compaction] == [
        ("before", "manual"),
        ("after", "manual"),
    ]


def test_only_events_whose_sections_are_selected_are_spooled(install, tmp_path):
    install.sensor(
        "calls",
        f"rules:\n  r:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
    )
    with dispatcher_lock(install):
        for name in HOOK_EVENTS:
            install.hook((PAYLOADS / f"{name}.json").read_bytes())
        # and SessionEnd, since this session has a spool: the dispatcher's cue to finish
        assert [e.event for e in entries(install)] == ["PreToolUse", "PreToolUse", "SessionEnd"]


def test_disabled_rules_and_sensors_take_the_fast_path(install, tmp_path):
    install.sensor(
        "off",
        f"enabled: false\nrules:\n  r:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
    )
    install.sensor(
        "off2",
        f"rules:\n  r:\n    enabled: false\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
    )
    install.hook(payload("PreToolUse"))
    assert not install.state_root.exists()


def test_the_index_follows_sensor_edits(install, tmp_path):
    install.hook(payload("PreToolUse"))
    assert not install.state_root.exists()
    path = install.sensor(
        "late",
        f"rules:\n  r:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
    )
    with dispatcher_lock(install):
        install.hook(payload("PreToolUse"))
        assert len(entries(install)) == 1
        path.write_text(path.read_text().replace("tool_call", "user_prompt"))
        os.utime(path, ns=(1, 1))  # mtime changes even within one clock tick
        install.hook(payload("PreToolUse"))
        assert len(entries(install)) == 1
        install.hook(payload("UserPromptSubmit"))
        assert len(entries(install)) == 2


def test_project_sensor_takes_effect_when_the_project_is_allowed(install, tmp_path):
    install.sensor(
        "p",
        f"rules:\n  r:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
        layer="project",
    )
    install.hook(payload("PreToolUse"))
    assert not install.state_root.exists()
    install.config(f"ways:\n  project_sensors: ['{install.project}']\n")
    with dispatcher_lock(install):
        install.hook(payload("PreToolUse"))
        assert len(entries(install)) == 1


@pytest.mark.parametrize("garbage", [b"", b"not json", b"rubbish" * 1000, b"{", b"\x00" * 64])
def test_corrupt_index_is_rebuilt(install, tmp_path, garbage):
    install.sensor("all", everything_sensor(tmp_path / "o"))
    install.hook(payload("SessionEnd"))  # builds the index
    [idx] = list((install.root / "cache").rglob("*.idx"))
    idx.write_bytes(garbage)
    with dispatcher_lock(install):
        r = install.hook(payload("PreToolUse"))
        assert r.returncode == 0 and r.stdout == b""
        assert [e.event for e in entries(install)][-1] == "PreToolUse"
    assert idx.read_text().startswith("ways-sensors-index 2 ")


def test_fifty_concurrent_hooks_leave_fifty_intact_entries(install, tmp_path):
    install.sensor("all", everything_sensor(tmp_path / "o"))
    base = payload("PreToolUse")
    big = "x" * 200_000  # large enough that a torn write would show
    bodies = [
        json.dumps(
            {**base, "tool_use_id": f"toolu_{i:03d}", "tool_input": {"command": f"echo {i} {big}"}}
        ).encode()
        for i in range(50)
    ]
    from ways_sensors.commands.reconcile import hook_command

    cmd = ["sh", "-c", hook_command(sys.executable, str(LAUNCHER))]
    with dispatcher_lock(install):  # from the warm-up: its dispatcher would clear the spool
        install.hook(payload("SessionEnd"))  # warm the index first
        procs = [
            subprocess.Popen(
                cmd,
                env=install.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in bodies
        ]
        results = [None] * 50

        def feed(i):
            results[i] = procs[i].communicate(bodies[i], timeout=120)

        threads = [threading.Thread(target=feed, args=(i,)) for i in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        got = [e for e in entries(install) if e.event == "PreToolUse"]
    assert all(p.returncode == 0 for p in procs)
    assert all(r == (b"", b"") for r in results)
    assert len(got) == 50
    assert sorted(e.payload for e in got) == sorted(bodies)
    segs = sorted((install.sessions() / SID / "spool").glob("*.seg"))
    assert len(segs) > 1  # 10 MB of entries rolled over into new segments
    frames = sum(p.read_bytes().count(b"WS1 ") for p in segs)
    assert frames == 51  # and the warm-up SessionEnd
    assert all(p.read_bytes().endswith(b"\n") for p in segs)


@pytest.mark.parametrize(
    "sid",
    ["../../../escape", "/etc/passwd", "a\x00b", "..", "a/b", "x" * 300, "", "sess ion"],
)
def test_session_ids_that_try_to_escape_are_refused(install, tmp_path, sid):
    install.sensor("all", everything_sensor(tmp_path / "o"))
    r = install.hook({**payload("PreToolUse"), "session_id": sid})
    assert (r.returncode, r.stdout) == (0, b"")
    written = [p for p in all_files(install.root) if "cache" not in p.parts]
    written = [p for p in written if install.config_root not in p.parents]
    assert [p.name for p in written] == ["events.log"]
    assert "hook.bad_session_id" in (install.state_root / "events.log").read_text()
    assert not (tmp_path.parent / "escape").exists()


def test_read_only_state_root_still_exits_zero_silently(install, tmp_path):
    if os.geteuid() == 0:
        # root ignores permission bits: make the state root a file instead
        (install.root / "state").write_text("not a folder")
    else:
        (install.root / "state").mkdir(mode=0o500)
    install.sensor("all", everything_sensor(tmp_path / "o"))
    r = install.hook(payload("PreToolUse"))
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def test_internal_errors_are_logged_content_free(install, tmp_path):
    install.sensor("all", everything_sensor(tmp_path / "o"))
    spool_dir = install.sessions() / SID / "spool"
    spool_dir.mkdir(parents=True)
    (spool_dir / "0000000001.seg").mkdir()  # a folder where the segment should be
    secret_prompt = "my password is hunter2"
    with dispatcher_lock(install):
        r = install.hook({**payload("UserPromptSubmit"), "prompt": secret_prompt})
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    log = (install.state_root / "events.log").read_text()
    assert '"kind":"hook.error"' in log and "IsADirectoryError" in log
    assert "hunter2" not in log


def test_huge_payload_is_drained_and_refused(install, tmp_path):
    install.sensor("all", everything_sensor(tmp_path / "o"))
    huge = b'{"hook_event_name":"PreToolUse","session_id":"s","x":"' + b"a" * (70 << 20) + b'"}'
    r = install.hook(huge)
    assert (r.returncode, r.stdout) == (0, b"")
    assert "hook.payload_too_large" in (install.state_root / "events.log").read_text()


def test_plain_console_script_works_for_hand_wiring(install, tmp_path):
    install.sensor("all", everything_sensor(tmp_path / "o"))
    with dispatcher_lock(install):
        r = install.hook(payload("UserPromptSubmit"), wired=False)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        assert [e.event for e in entries(install)] == ["UserPromptSubmit"]


def test_missing_launcher_or_interpreter_exits_zero(install):
    from ways_sensors.commands.reconcile import hook_command

    for cmd in (
        hook_command("/nonexistent/python", str(LAUNCHER)),
        hook_command(sys.executable, "/nonexistent/_launch.py"),
    ):
        r = subprocess.run(["sh", "-c", cmd], input=b"{}", capture_output=True, env=install.env)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def test_fast_path_imports_only_the_standard_library(install, tmp_path):
    install.hook(payload("PreToolUse"))  # build the index first
    mods = modules_on_path(install, tmp_path, (PAYLOADS / "PreToolUse.json").read_bytes())
    assert not (FORBIDDEN & mods), FORBIDDEN & mods
    assert "os" not in mods  # posix only
    # every import costs ~0.1 ms: the event no rule wants loads these four of ours only
    # (the faces are in index.py; no agents registry, no adapter, no layout)
    ours = {m for m in mods if m.startswith("ways_sensors")}
    assert ours == {"ways_sensors", "ways_sensors.hook", "ways_sensors.roots", "ways_sensors.index"}


@pytest.mark.parametrize("sid", ["cb52034e-a092-4d13-98b6-9b8a283f4375", "a", "x_" * 60])
def test_the_hook_spells_the_pending_marker_as_the_layout_does(install, sid, monkeypatch):
    from ways_sensors import hook
    from ways_sensors.state.layout import Layout

    for root in (str(install.root / "state"), str(install.root / "state") + "/", "/"):
        monkeypatch.setenv("XDG_STATE_HOME", root)
        assert hook.pending_marker(sid) == Layout().pending_marker(sid)


def test_hand_off_path_imports_only_the_standard_library(install, tmp_path):
    install.sensor("all", everything_sensor(tmp_path / "o"))
    # the lock is held from the first event: a dispatcher started by it would deliver the
    # session's end and clear the spool before the count, or not, as the machine's load has it
    with dispatcher_lock(install):
        install.hook(payload("SessionEnd"))  # builds the index
        mods = modules_on_path(install, tmp_path, (PAYLOADS / "PreToolUse.json").read_bytes())
        assert len(entries(install)) == 2
    assert not (FORBIDDEN & mods), FORBIDDEN & mods


# --- fuzzing ---------------------------------------------------------------------------


def run_hook_raw(install, data: bytes):
    r = subprocess.run(
        [sys.executable, "-S", str(LAUNCHER), "hook", "sensors"],
        input=data,
        capture_output=True,
        env=install.env,
        timeout=60,
    )
    return r.returncode, r.stdout


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=30)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=15,
)
events = st.sampled_from(
    [
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
        "SessionStart",
        "SubagentStop",
        "Bogus",
        "",
        "PreCompact",
    ]
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(event=events, sid=st.text(max_size=20), body=json_values)
def test_fuzzed_payloads_never_fail_or_print(install, tmp_path, event, sid, body):
    install.sensor("all", everything_sensor(tmp_path / "o"))
    data = json.dumps({"hook_event_name": event, "session_id": sid, "body": body}).encode()
    assert run_hook_raw(install, data) == (0, b"")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=2000))
def test_random_bytes_never_fail_or_print(install, tmp_path, data):
    install.sensor("all", everything_sensor(tmp_path / "o"))
    assert run_hook_raw(install, data) == (0, b"")


def test_mutated_real_payloads_never_fail_or_print(install, tmp_path):
    install.sensor("all", everything_sensor(tmp_path / "o"))
    rnd = random.Random(1234)
    samples = [p.read_bytes() for p in sorted(PAYLOADS.glob("*.json"))]
    for _ in range(60):
        data = bytearray(rnd.choice(samples))
        for _ in range(rnd.randint(1, 8)):
            i = rnd.randrange(len(data))
            data[i] = rnd.randrange(256)
        if rnd.random() < 0.3:
            data = data[: rnd.randrange(len(data))]
        assert run_hook_raw(install, bytes(data)) == (0, b"")


def test_version_imports_nothing_it_does_not_need(install):
    code = (
        "import sys; from ways_sensors.cli import main; main(['--version']); "
        "print(sorted(m for m in sys.modules if m.startswith(('ways_sensors', 'argparse',"
        " 'yaml', 'msgspec', 're'))))"
    )
    r = install.python(code)
    assert r.stdout.splitlines()[0].startswith("ways ")
    mods = ast.literal_eval(r.stdout.splitlines()[1])
    assert set(mods) <= {"ways_sensors", "ways_sensors.cli", "re"}  # re: site imports it
