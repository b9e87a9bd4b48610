"""`ways sensors test` on recorded sessions: a real one and a long generated one."""

from __future__ import annotations

import json
import os
import random

from ..conftest import TRANSCRIPT, hooks, payload
from ..e2e.messages_api import THINKING

ALL = (
    "[user_prompt, queued_message, assistant_response, tool_call, tool_result, subagent, "
    "compaction, session_start, session_end]"
)


def run_test(install, rule, transcript, *extra):
    r = install.ways(
        "sensors", "test", rule, "--transcript", str(transcript), "--json", *extra, timeout=300
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_recorded_session_counts_and_nothing_dispatched(install, tmp_path):
    out = tmp_path / "never.jsonl"
    install.sensor(
        "all", f"rules:\n  r:\n    sections: {ALL}\n    dispatch: {{file: {{path: '{out}'}}}}\n"
    )
    data = run_test(install, "all/r", TRANSCRIPT)
    files = [TRANSCRIPT, *TRANSCRIPT.with_suffix("").glob("subagents/*.jsonl")]
    assert len(files) == 2  # the subagent's own transcript is read too
    assert data["lines"] == sum(len(f.read_bytes().splitlines()) for f in files)
    assert data["malformed"] == 0
    sent_to_hooks = hooks()

    def n(event, **fields):
        return sum(
            1
            for t in sent_to_hooks
            if t["hook_event_name"] == event and all(t.get(k) == v for k, v in fields.items())
        )

    # What the transcript alone can tell (the client sent more to its hooks): the replay
    # has no SessionEnd, no internal agents (they write no transcript of their own), and
    # the prompt typed while a command ran is a queued_message, not a prompt.
    assert data["matched"] == {
        "session_start": n("SessionStart"),  # startup and compact
        "user_prompt": n("UserPromptSubmit") - 1,
        "queued_message": 1,
        "tool_call": n("PreToolUse"),  # the subagent's included
        "tool_result": n("PostToolUse") + n("PostToolUseFailure"),
        "subagent": n("SubagentStart") + n("SubagentStop", agent_type="general-purpose"),
        "assistant_response": n("Stop") + n("SubagentStop", agent_type="general-purpose") + 1,
        "compaction": 2,
    }
    assert data["matched"]["tool_call"] >= 7 and data["matched"]["assistant_response"] >= 8
    sent = data["sent"]
    assert not out.exists()  # a preview dispatches nothing
    calls = [r for r in sent if r["section"] == "tool_call"]
    results = {r["data"]["tool_use_id"]: r for r in sent if r["section"] == "tool_result"}
    assert {c["data"]["tool_use_id"] for c in calls} == set(results)  # paired by id
    assert set(results) == {t["tool_use_id"] for t in sent_to_hooks if "tool_use_id" in t}
    failing = [r for r in results.values() if r["data"]["status"] == "failure"]
    assert len(failing) == 1
    assert failing[0]["data"]["error"] == payload("PostToolUseFailure")["error"]
    start = payload("SubagentStart")
    sub = [r for r in sent if r["section"] == "subagent"]
    assert {(r["agent_id"], r["agent_type"]) for r in sub} == {
        (start["agent_id"], start["agent_type"])
    }
    inside = [c for c in calls if c["agent_id"]]
    assert [c["data"]["tool_use_id"] for c in inside] == [
        payload("PreToolUse-in-subagent")["tool_use_id"]
    ]
    replies = [r["data"] for r in sent if r["section"] == "assistant_response"]
    assert payload("Stop")["last_assistant_message"] in [r["text"] for r in replies]
    assert [r["text"] for r in replies if r.get("interrupted")] == [
        t["text"] for t in replies if t["text"].startswith("PARTIAL-REPLY")
    ]
    assert sum(1 for r in replies if r.get("interrupted")) == 1
    assert THINKING in TRANSCRIPT.read_text() and THINKING not in json.dumps(sent)
    assert [r["rule_seq"] for r in sent] == list(range(1, len(sent) + 1))


def test_where_and_masking_apply_in_the_preview(install, tmp_path):
    install.sensor(
        "bash",
        f"rules:\n  r:\n    sections: [tool_call]\n"
        f"    where: {{data.tool_name: Bash}}\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
    )
    transcript = tmp_path / "s.jsonl"
    call = {
        "type": "assistant",
        "uuid": "a1",
        "timestamp": "2026-11-29T10:00:00.000Z",
        "message": {
            "id": "m1",
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Bash",
                    "input": {"command": "git push https://x:ghp_" + "Zq4v" * 9 + "@h/r.git"},
                }
            ],
        },
    }
    edit = {
        "type": "assistant",
        "uuid": "a2",
        "message": {
            "id": "m2",
            "content": [
                {"type": "tool_use", "id": "t2", "name": "Edit", "input": {"file_path": "/x"}}
            ],
        },
    }
    transcript.write_text(json.dumps(call) + "\n" + json.dumps(edit) + "\n")
    data = run_test(install, "bash/r", transcript)
    assert data["matched"] == {"tool_call": 1}
    [rec] = data["sent"]
    assert "Zq4v" not in json.dumps(rec) and rec["redactions"][0]["kind"] == "github-token"


def generated(path, turns: int) -> dict[str, int]:
    """A long transcript: prompts, tool calls and results, replies, queued messages,
    bookkeeping and a broken line now and then. Returns the expected counts."""
    rnd = random.Random(5)
    n = {
        "user_prompt": 0,
        "tool_call": 0,
        "tool_result": 0,
        "assistant_response": 0,
        "queued_message": 0,
    }
    lines = []
    for t in range(turns):
        lines.append(
            {
                "type": "user",
                "uuid": f"u{t}",
                "timestamp": "2026-11-29T10:00:00.000Z",
                "message": {"role": "user", "content": f"prompt {t}"},
            }
        )
        n["user_prompt"] += 1
        for c in range(rnd.randint(1, 4)):
            tid = f"toolu_{t}_{c}"
            lines.append(
                {
                    "type": "assistant",
                    "uuid": f"a{t}_{c}",
                    "message": {
                        "id": f"m{t}_{c}",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": tid,
                                "name": "Bash",
                                "input": {"command": f"echo {t} {c}"},
                            }
                        ],
                    },
                }
            )
            lines.append(
                {
                    "type": "user",
                    "uuid": f"r{t}_{c}",
                    "toolUseResult": {"stdout": str(c)},
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": tid, "content": str(c)}],
                    },
                }
            )
            n["tool_call"] += 1
            n["tool_result"] += 1
            lines.append(
                {"type": "attachment", "uuid": f"h{t}_{c}", "attachment": {"type": "hook_success"}}
            )
            if rnd.random() < 0.05:
                lines.append(
                    {
                        "type": "queue-operation",
                        "operation": "enqueue",
                        "content": f"queued {t} {c}",
                    }
                )
                lines.append(  # absorbed into the running turn
                    {"type": "queue-operation", "operation": "remove", "content": f"queued {t} {c}"}
                )
                n["queued_message"] += 1
        lines.append(
            {
                "type": "assistant",
                "uuid": f"f{t}",
                "message": {
                    "id": f"mf{t}",
                    "stop_reason": "end_turn",
                    "content": [{"type": "text", "text": f"done {t}"}],
                },
            }
        )
        n["assistant_response"] += 1
        lines.append({"type": "system", "subtype": "turn_duration", "uuid": f"d{t}"})
    with open(path, "w") as f:
        for i, line in enumerate(lines):
            f.write(json.dumps(line) + "\n")
            if i % 997 == 0:
                f.write('{"type": "user", "broken\n')  # a torn line, skipped alone
        f.write('{"type": "half-written')  # an incomplete tail
    return n, len(lines)


def test_a_fifty_thousand_line_transcript(install, tmp_path):
    install.sensor(
        "all",
        f"rules:\n  r:\n    sections: {ALL}\n    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
    )
    path = tmp_path / "long.jsonl"
    expected, lines = generated(path, 4800)
    assert lines >= 50_000
    data = run_test(install, "all/r", path)
    expected["session_start"] = 1
    assert data["matched"] == {k: v for k, v in expected.items() if v}
    assert data["malformed"] == len(range(0, lines, 997))


def test_a_fifo_or_device_given_as_the_transcript_is_refused_in_one_line(install, tmp_path):
    """The file is never waited on (a FIFO has no writer) nor read: one line naming it."""
    out = tmp_path / "never.jsonl"
    rule = f"sections: [user_prompt]\n    dispatch: {{file: {{path: '{out}'}}}}\n"
    install.sensor("all", "rules:\n  r:\n    " + rule)
    fifo = tmp_path / "rollout-fifo.jsonl"  # a name Codex's detection would claim
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        r = install.ways("sensors", "test", "all/r", "--transcript", str(path), timeout=60)
        assert r.returncode != 0 and "Traceback" not in r.stderr
        assert f"{path} is not a regular file" in r.stderr and r.stdout == ""
