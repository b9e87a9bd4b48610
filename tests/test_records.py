"""The record builder over a live-growing transcript: queued messages and replies once each."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ways_sensors.agents.claude_code import builder as builder_module
from ways_sensors.agents.claude_code.builder import Builder, split_mcp
from ways_sensors.agents.claude_code.tracker import Tracker
from ways_sensors.records import envelope

from .conftest import TRANSCRIPT, hooks, payload
from .e2e.messages_api import THINKING
from .helpers import written_by

T0 = 1_795_000_000_000_000_000


@pytest.fixture(autouse=True)
def short_usage_wait(monkeypatch):
    """These transcripts are written by hand, often without a reply's last API call:
    a Stop's wait for it (2 s on a live one) is cut short here."""
    monkeypatch.setattr(builder_module, "USAGE_WAIT", 0.1)


class Session:
    """A transcript that grows line by line while hook events arrive, as in real life."""

    def __init__(self, tmp_path: Path):
        self.path = tmp_path / "session.jsonl"
        self.path.write_bytes(b"")
        self.builder = Builder()
        self.drafts = []
        self.ts = T0

    def write(self, *lines: bytes | dict) -> None:
        with open(self.path, "ab") as f:
            for line in lines:
                if isinstance(line, dict):
                    line = json.dumps(line).encode() + b"\n"
                f.write(line)

    def fire(self, name: str, **fields):
        return self.send({**payload(name), **fields})

    def send(self, p: dict):
        p = {**p, "transcript_path": str(self.path)}
        self.ts += 1_000_000
        # the tracker survives a dispatcher restart: round-trip it through JSON each time
        self.builder = Builder(Tracker.from_json(self.builder.tracker.to_json()))
        got = self.builder.build(p["hook_event_name"], p, self.ts)
        self.drafts += got
        return got

    def of(self, section):
        return [d for d in self.drafts if d.section == section]


def prompt(text, uuid):
    return {
        "type": "user",
        "uuid": uuid,
        "timestamp": "2026-10-06T10:00:00.000Z",
        "message": {"role": "user", "content": text},
        "origin": {"kind": "human"},
    }


def reply(text, uuid, msg="msg_x"):
    return {
        "type": "assistant",
        "uuid": uuid,
        "timestamp": "2026-10-06T10:00:01.000Z",
        "message": {"id": msg, "role": "assistant", "content": [{"type": "text", "text": text}]},
    }


def thinking(text, uuid, msg="msg_x"):
    return {
        "type": "assistant",
        "uuid": uuid,
        "message": {
            "id": msg,
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": text}],
        },
    }


INTERRUPT = {
    "type": "user",
    "uuid": "int-1",
    "message": {
        "role": "user",
        "content": [{"type": "text", "text": "[Request interrupted by user]"}],
    },
}


def test_recorded_session_played_live(tmp_path):
    """The real session: its hook payloads in the order the client sent them, its
    transcript growing up to where the client had written it at each event."""
    raw = TRANSCRIPT.read_bytes().splitlines(keepends=True)
    lines = [json.loads(x) for x in raw]
    s = Session(tmp_path)
    done = 0
    for p in hooks():
        upto = written_by(p, lines)
        if upto is not None and upto >= done:
            s.write(*raw[done : upto + 1])
            done = upto + 1
        s.send(p)

    sent = hooks()
    # typed while a command ran, absorbed into the running turn (a queued_command)
    [absorbed] = [
        x["attachment"]["prompt"]
        for x in lines
        if (x.get("attachment") or {}).get("type") == "queued_command"
    ]
    queued = s.of("queued_message")
    assert [q.data["text"] for q in queued] == [absorbed]
    prompts = [t["prompt"] for t in sent if t["hook_event_name"] == "UserPromptSubmit"]
    got = Counter(d.data["prompt"] for d in s.of("user_prompt"))
    assert all(got[p] == 1 for p in prompts if p != absorbed) and len(prompts) >= 7
    # every reply the client reported once, plus the one the user interrupted (no Stop),
    # read from the transcript: the text before "[Request interrupted by user]"
    stops = [
        t["last_assistant_message"]
        for t in sent
        if t["hook_event_name"] in ("Stop", "SubagentStop")
    ]
    cut = next(i for i, x in enumerate(lines) if "[Request interrupted by user]" in json.dumps(x))
    partial = lines[cut - 1]["message"]["content"][0]["text"]
    replies = [
        (r.data["text"], r.data.get("interrupted", False)) for r in s.of("assistant_response")
    ]
    assert [t for t, cut_short in replies if not cut_short] == stops
    assert [t for t, cut_short in replies if cut_short] == [partial]
    assert THINKING in TRANSCRIPT.read_text()  # the model did think
    assert THINKING not in json.dumps([d.data for d in s.drafts])  # thinking never exported
    assert [c.data["phase"] for c in s.of("compaction")] == ["before", "after"]
    assert [c.data["trigger"] for c in s.of("compaction")] == ["manual", "manual"]


def test_interrupted_reply_is_recovered_at_the_next_stop_once(tmp_path):
    s = Session(tmp_path)
    s.fire("SessionStart")
    s.write(
        prompt("first question", "p1"),
        thinking("SECRET-THOUGHT", "a0", "m1"),
        reply("Partial answer, then", "a1", "m1"),
        reply("more of it", "a2", "m1"),
        INTERRUPT,
    )
    # no Stop: the user interrupted. Next turn:
    s.write(prompt("second question", "p2"), reply("Second answer", "a3", "m2"))
    s.fire("Stop", last_assistant_message="Second answer")
    s.write(prompt("third", "p3"), reply("Third answer", "a4", "m3"))
    s.fire("Stop", last_assistant_message="Third answer")
    s.fire("SessionEnd")
    texts = [(r.data["text"], r.data.get("interrupted", False)) for r in s.of("assistant_response")]
    assert texts == [
        ("Partial answer, then\nmore of it", True),
        ("Second answer", False),
        ("Third answer", False),
    ]
    assert "SECRET-THOUGHT" not in json.dumps([d.data for d in s.drafts])


def test_interrupted_last_turn_is_recovered_at_session_end(tmp_path):
    s = Session(tmp_path)
    s.fire("SessionStart")
    s.write(prompt("q", "p1"), reply("A", "a1", "m1"))
    s.fire("Stop", last_assistant_message="A")
    s.write(prompt("q2", "p2"), reply("Cut off mid", "a2", "m2"), INTERRUPT)
    s.fire("SessionEnd")
    texts = [r.data["text"] for r in s.of("assistant_response")]
    assert texts == ["A", "Cut off mid"]


def test_stop_before_its_prompt_reaches_the_transcript(tmp_path):
    s = Session(tmp_path)
    s.fire("SessionStart")
    s.fire("Stop", last_assistant_message="early")  # transcript lags behind
    s.write(prompt("q", "p1"), reply("early", "a1"))
    s.write(prompt("q2", "p2"), reply("next", "a2", "m2"))
    s.fire("Stop", last_assistant_message="next")
    s.fire("SessionEnd")
    assert [r.data["text"] for r in s.of("assistant_response")] == ["early", "next"]


def test_resumed_session_does_not_reexport_old_turns(tmp_path):
    s = Session(tmp_path)
    s.write(prompt("old, interrupted", "p0"), reply("old partial", "a0"), INTERRUPT)
    s.fire("SessionStart", source="resume")  # a new tracker: starts at the end
    s.write(prompt("new", "p1"), reply("new answer", "a1", "m1"))
    s.fire("Stop", last_assistant_message="new answer")
    s.fire("SessionEnd")
    assert [r.data["text"] for r in s.of("assistant_response")] == ["new answer"]


def test_queued_messages_each_once(tmp_path):
    s = Session(tmp_path)
    s.fire("SessionStart")
    enq = {
        "type": "queue-operation",
        "operation": "enqueue",
        "content": "typed while working",
        "timestamp": "2026-10-06T10:00:02.000Z",
    }
    s.write(prompt("q", "p1"), enq)
    s.fire("PostToolUse")
    s.write(
        {"type": "queue-operation", "operation": "remove", "content": "typed while working"},
        {
            "type": "attachment",
            "uuid": "att1",
            "attachment": {
                "type": "queued_command",
                "prompt": "typed while working",
                "commandMode": "prompt",
                "origin": {"kind": "human"},
            },
        },
        {
            "type": "attachment",
            "uuid": "att2",
            "attachment": {
                "type": "queued_command",
                "prompt": [{"type": "text", "text": "only attached"}],
                "commandMode": "prompt",
            },
        },
        {
            "type": "queue-operation",
            "operation": "enqueue",
            "content": "<task-notification>done</task-notification>",
        },
        {
            "type": "attachment",
            "uuid": "att3",
            "attachment": {
                "type": "queued_command",
                "prompt": "<task-notification>x",
                "commandMode": "task-notification",
            },
        },
    )
    s.fire("PostToolUse")
    s.fire("Stop")
    s.fire("SessionEnd")
    assert [q.data["text"] for q in s.of("queued_message")] == [
        "typed while working",
        "only attached",
    ]


def test_half_written_line_is_read_once_complete(tmp_path):
    s = Session(tmp_path)
    s.fire("SessionStart")
    line = (
        json.dumps(
            {"type": "queue-operation", "operation": "enqueue", "content": "split write"}
        ).encode()
        + b"\n"
    )
    s.write(line[:20])
    s.fire("PostToolUse")
    assert s.of("queued_message") == []
    s.write(line[20:])
    s.write({"type": "queue-operation", "operation": "remove", "content": "split write"})
    s.fire("PostToolUse")
    assert [q.data["text"] for q in s.of("queued_message")] == ["split write"]


def test_prompts_delivered_as_turns_are_not_queued_messages(tmp_path):
    # what the real client writes for every prompt: enqueue, dequeue, the user line
    s = Session(tmp_path)
    s.fire("SessionStart")
    s.write(
        {"type": "queue-operation", "operation": "enqueue", "content": "first"},
        {"type": "queue-operation", "operation": "dequeue"},
        prompt("first", "p1"),
        {"type": "queue-operation", "operation": "enqueue", "content": "pulled back"},
        {"type": "queue-operation", "operation": "popAll"},
    )
    s.fire("PostToolUse")
    s.fire("Stop")
    s.fire("SessionEnd")
    assert s.of("queued_message") == []


def test_internal_agents_and_mcp_tools():
    b = Builder()
    stop = {**payload("SubagentStop"), "agent_type": "", "agent_id": "aint"}
    sub, rep = b.build("SubagentStop", stop, T0)
    assert sub.agent_type == rep.agent_type == "internal"
    b.tracker.started = True
    never_started = {**payload("SubagentStop"), "agent_id": "a-unknown"}
    assert b.build("SubagentStop", never_started, T0)[1].agent_type == "internal"
    b.build("SubagentStart", payload("SubagentStart"), T0)
    started = payload("SubagentStart")["agent_type"]
    assert started not in ("", "main", "internal")
    assert b.build("SubagentStop", payload("SubagentStop"), T0)[1].agent_type == started

    call = {
        **payload("PreToolUse"),
        "tool_name": "mcp__plugin_x_tracker__create_issue",
        "mcp_server": {"name": "tracker", "source": "plugin"},
    }
    [d] = b.build("PreToolUse", call, T0)
    assert (d.data["mcp_server"], d.data["mcp_tool"]) == ("plugin_x_tracker", "create_issue")
    assert d.data["extra"]["mcp_server"] == {"name": "tracker", "source": "plugin"}
    assert split_mcp("Bash") is None and split_mcp("mcp__x") is None


def test_envelope_shape():
    [d] = Builder().build("UserPromptSubmit", payload("UserPromptSubmit"), T0)
    rec = envelope(d, 7, "sid", "/p")
    assert list(rec) == [
        "schema",
        "section",
        "seq",
        "session_id",
        "agent",
        "agent_id",
        "agent_type",
        "timestamp",
        "project",
        "hook_event",
        "prompt_id",
        "data",
    ]
    assert rec["schema"] == "ways.sensor.record/1" and rec["seq"] == 7
    assert rec["timestamp"].endswith("Z") and len(rec["timestamp"]) == 24
    assert rec["data"]["prompt"] == payload("UserPromptSubmit")["prompt"]
    assert "prompt" not in rec["data"]["extra"] and "session_id" not in rec["data"]["extra"]
