"""Every field of every record is the same whatever other rules are enabled.

The recorded real Claude Code session (a general-purpose subagent, a message typed while
a command ran, a compaction, a task notification) is played twice through the real
hook, its transcript growing as the client wrote it, then a real dispatcher: once with
only rule `r` enabled, once with `r` beside a rule selecting every other section. The
hook picks what to spool by what rules select, so before the fix the subagent's reply
lost its type ("internal") unless a rule selected `subagent`. Each hook runs under a
frozen clock (Debian's faketime; set-up installs it) at the same instant in both runs,
so `r`'s records must be byte-identical apart from seq, rule, rule_seq and chain."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import LAUNCHER, TRANSCRIPT, Install, hooks, kill_dispatchers
from .helpers import dispatcher_alive, dispatcher_lock, wait_until, written_by

R_SECTIONS = ["user_prompt", "queued_message", "assistant_response"]
OTHERS = [
    "tool_call",
    "tool_result",
    "subagent",
    "compaction",
    "session_start",
    "session_end",
    "permission",
    "notification",
    "error",
]
VARYING = ("seq", "rule", "rule_seq", "chain")


def sensor(out: Path, sections: list[str]) -> str:
    return (
        f"rules:\n  r:\n    sections: [{', '.join(sections)}]\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n"
    )


def play(install: Install, folder: Path) -> None:
    """The recorded session through the wired hook, each event at a fixed instant (the
    transcript growing as the client wrote it), then the real dispatcher over it."""
    from ways_sensors.commands.reconcile import hook_command

    assert shutil.which("faketime"), "faketime is missing: scripts/setup.sh installs it"
    sent = hooks()
    sid = sent[0]["session_id"]
    raw = TRANSCRIPT.read_bytes().splitlines(keepends=True)
    lines = [json.loads(x) for x in raw]
    path = folder / TRANSCRIPT.name
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    subagents = TRANSCRIPT.with_suffix("") / "subagents"
    done = 0

    def hook(i: int, p: dict) -> None:
        nonlocal done
        upto = written_by(p, lines)
        if upto is not None and upto >= done:
            with path.open("ab") as f:
                f.write(b"".join(raw[done : upto + 1]))
            done = upto + 1
        p = {**p, "transcript_path": str(path)}
        if p.get("agent_transcript_path"):
            p["agent_transcript_path"] = str(subagents / Path(p["agent_transcript_path"]).name)
        at = f"2026-11-29 23:52:{i:02d}"
        argv = ["faketime", "-f", at, "sh", "-c", hook_command(sys.executable, str(LAUNCHER))]
        r = subprocess.run(
            argv, env={**install.env, "TZ": "UTC"}, input=json.dumps(p).encode(),
            capture_output=True, cwd=install.project, timeout=60,
        )  # fmt: skip
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")

    with dispatcher_lock(install, sid):  # spooled as the hook left it, no dispatcher yet
        for i, p in enumerate(sent):
            hook(i, p)
    with path.open("ab") as f:
        f.write(b"".join(raw[done:]))
    # then the real dispatcher over the whole spool: what it builds does not hang on how
    # far it lagged behind the client (the Stop's wait for a reply's last API call)
    r = subprocess.run(
        [sys.executable, "-S", str(LAUNCHER), "sensors", "dispatch", "--session", sid,
         "--idle", "0.5"],
        env=install.env, capture_output=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert wait_until(lambda: not dispatcher_alive(install, sid))


def records_of(tmp_path: Path, others: bool) -> list[dict]:
    """`r`'s records; each run in the same folders (the paths are in the records)."""
    root = tmp_path / "run"
    install = Install(root)
    out = root / "r.jsonl"
    install.sensor("s", sensor(out, R_SECTIONS))
    if others:
        install.sensor("o", sensor(root / "o.jsonl", OTHERS))
    try:
        play(install, root / "transcripts")
        return [json.loads(x) for x in out.read_text().splitlines()]
    finally:
        kill_dispatchers(root)
        shutil.rmtree(root)


def strip(rec: dict) -> str:
    return json.dumps({k: v for k, v in rec.items() if k not in VARYING})


def test_a_rules_records_do_not_depend_on_other_rules(tmp_path):
    alone = records_of(tmp_path, False)
    beside = records_of(tmp_path, True)
    a, b = [strip(r) for r in alone], [strip(r) for r in beside]
    diff = next(((x, y) for x, y in zip(a, b, strict=False) if x != y), None)
    assert a == b, diff or (len(a), len(b))
    replies = [r for r in alone if r["section"] == "assistant_response" and r["agent_id"]]
    real = [r for r in replies if r["agent_id"] == "ac6acdad0ad446d5e"]
    assert [r["agent_type"] for r in real] == ["general-purpose"]  # not "internal"
    assert {r["agent_type"] for r in replies if r not in real} == {"internal"}


def test_a_message_typed_while_a_command_ran_is_exported_once(tmp_path):
    recs = records_of(tmp_path, False)
    typed = "also check the logs"
    queued = [r for r in recs if r["section"] == "queued_message"]
    prompts = [r for r in recs if r["section"] == "user_prompt"]
    assert [q["data"]["text"] for q in queued] == [typed]
    assert typed not in [p["data"]["prompt"] for p in prompts]
    notes = [p for p in prompts if p["data"]["prompt"].startswith("<task-notification>")]
    assert [p["data"]["origin"] for p in notes] == ["client"]  # the client wrote it
    assert {p["data"]["origin"] for p in prompts if p not in notes} == {"human"}
