"""What `ways sensors test` shows is what the live path sends (issue 21).

A recorded real Claude Code session with a general-purpose subagent, a message typed
while a command ran, a permission prompt answered yes and a compaction
(tests/fixtures/claude-code-<version>-permission, scripts/record_fixtures.py
--permission) is played through the real hook, its transcript growing as the client
wrote it, then the real dispatcher; and the same transcript is replayed by `ways
sensors test`. A rule's records are the same in both, field for field, but for what
only the hook payloads carry (docs/records.md, "What a preview cannot show")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .conftest import FIXTURES, Install, kill_dispatchers
from .helpers import play_recorded

RECORDED = FIXTURES.parent / (FIXTURES.name + "-permission")
SENT = [json.loads(x) for x in (RECORDED / "hooks.jsonl").read_text().splitlines()]
TRANSCRIPT = next((RECORDED / "transcript").glob("*.jsonl"))
SECTIONS = ["user_prompt", "queued_message", "assistant_response", "tool_call", "tool_result",
            "subagent", "compaction", "session_start", "session_end", "permission",
            "notification", "error"]  # fmt: skip


def both(tmp_path: Path, sections: list[str]) -> tuple[list[dict], list[dict]]:
    install = Install(tmp_path)
    out = tmp_path / "r.jsonl"
    install.sensor(
        "s", f"rules:\n  r:\n    sections: [{', '.join(sections)}]\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )  # fmt: skip
    folder = tmp_path / "transcripts"
    try:
        play_recorded(install, folder, SENT, TRANSCRIPT)
    finally:
        kill_dispatchers(tmp_path)
    shutil.copytree(TRANSCRIPT.with_suffix(""), folder / TRANSCRIPT.stem)
    live = [json.loads(x) for x in out.read_text().splitlines()]
    r = install.ways("sensors", "test", "s/r", "--transcript", str(folder / TRANSCRIPT.name),
                     "--json", timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return live, json.loads(r.stdout)["sent"]


# numbered per rule / per preview; identity: the install's (a preview leaves it out)
VARYING = ("seq", "rule", "rule_seq", "chain", "identity", "inventory")


# what only the hook payloads carry, never the transcript (docs/records.md, "What a
# preview cannot show"): the preview cannot show these records ...
def live_only(rec: dict) -> bool:
    d = rec["data"]
    return (
        rec["section"] in ("session_end", "notification", "error")
        or rec["agent_type"] == "internal"  # the client's own agents write no file
        or (rec["section"] == "compaction" and d.get("phase") == "summary")
    )


# ... nor these fields of the others
def comparable(rec: dict) -> dict:
    out = {k: v for k, v in rec.items() if k not in (*VARYING, "timestamp")}
    data = {k: v for k, v in rec["data"].items() if k != "extra"}  # the payload's leftovers
    if rec["section"] == "permission" and data.get("phase") == "request":
        data.pop("suggestions")  # what the prompt offered
    if rec["section"] == "tool_result" and rec["agent_id"]:
        data.pop("output")  # a subagent's file holds a result's text, not its structure
    return {**out, "data": data}


def streams(recs: list[dict]) -> dict:
    """Each agent's records in order (a background subagent runs beside the main agent:
    how their records interleave is the hooks' timing, which no file records)."""
    out: dict = {}
    for r in recs:
        out.setdefault(r["agent_id"], []).append(json.dumps(comparable(r), sort_keys=True))
    return out


def test_the_preview_shows_what_the_live_path_sends(tmp_path):
    live, shown = both(tmp_path, SECTIONS)
    # the session has the four things the issue names
    assert {r["agent_type"] for r in live if r["section"] == "subagent"} >= {"general-purpose"}
    assert [r["data"]["text"] for r in live if r["section"] == "queued_message"] == [
        "also check the logs"
    ]
    assert {r["data"]["phase"] for r in live if r["section"] == "compaction"} >= {"before"}
    asked = [r for r in live if r["section"] == "permission" and r["data"]["phase"] == "request"]
    assert [r["data"]["tool_name"] for r in asked] == ["Write"]
    decided = [r["data"] for r in live if r["section"] == "permission"
               and r["data"].get("tool_use_id") == asked[0]["data"]["tool_use_id"]
               and r["data"]["phase"] == "decision"]  # fmt: skip
    assert [d["decision"] for d in decided] == ["allowed_by_user"]
    # what the preview shows is what went out, record for record
    assert streams([r for r in live if not live_only(r)]) == streams(shown)
    assert not [r for r in shown if live_only(r)]
    # and what it cannot show is only what the docs say
    missing = sorted({(r["section"], r["agent_type"]) for r in live if live_only(r)})
    assert missing == [
        ("assistant_response", "internal"),
        ("compaction", "main"),
        ("session_end", "main"),
        ("subagent", "internal"),
    ]


R = ["permission", "queued_message", "assistant_response", "subagent"]


def records_of(tmp_path: Path, sections: list[str], others: bool) -> list[dict]:
    """`r`'s records; each run in the same folders (the paths are in the records)."""
    root = tmp_path / "run"
    install = Install(root)
    out = root / "r.jsonl"
    rule = "rules:\n  r:\n    sections: [{}]\n    dispatch: {{file: {{path: '{}'}}}}\n"
    install.sensor("s", rule.format(", ".join(sections), out))
    if others:
        rest = [s for s in SECTIONS if s not in sections]
        install.sensor("o", rule.format(", ".join(rest), root / "o.jsonl"))
    try:
        play_recorded(install, root / "transcripts", SENT, TRANSCRIPT)
        return [json.loads(x) for x in out.read_text().splitlines()]
    finally:
        kill_dispatchers(root)
        shutil.rmtree(root)


def test_a_rules_records_do_not_depend_on_other_rules(tmp_path):
    """The same session: a rule's records alone and beside a rule selecting every other
    section, byte-identical but for seq, rule, rule_seq and chain (the hooks run at the
    same instants in both runs: play_recorded)."""
    alone = records_of(tmp_path, R, False)
    beside = records_of(tmp_path, R, True)

    def strip(rec: dict) -> str:
        return json.dumps({k: v for k, v in rec.items() if k not in VARYING})

    assert {r["section"] for r in alone} == set(R)
    assert [strip(r) for r in alone] == [strip(r) for r in beside]
