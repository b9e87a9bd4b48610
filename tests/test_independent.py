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
from pathlib import Path

from .conftest import TRANSCRIPT, Install, hooks, kill_dispatchers
from .helpers import play_recorded

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
# identity and inventory: each run makes its state root anew, and with it an install id
VARYING = ("seq", "rule", "rule_seq", "chain", "identity", "inventory")


def sensor(out: Path, sections: list[str]) -> str:
    return (
        f"rules:\n  r:\n    sections: [{', '.join(sections)}]\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n"
    )


def records_of(tmp_path: Path, others: bool) -> list[dict]:
    """`r`'s records; each run in the same folders (the paths are in the records)."""
    root = tmp_path / "run"
    install = Install(root)
    out = root / "r.jsonl"
    install.sensor("s", sensor(out, R_SECTIONS))
    if others:
        install.sensor("o", sensor(root / "o.jsonl", OTHERS))
    try:
        play_recorded(install, root / "transcripts", hooks(), TRANSCRIPT)
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
