"""The real client held open for a whole session: what only the transcript tells (a reply
the user interrupted, a message typed while the agent worked) reaches the records once."""

from __future__ import annotations

import json

import pytest

from . import harness
from .conversation import Conversation
from .messages_api import THINKING

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    s = harness.prepare(tmp_path_factory.mktemp("claude-conversation"))
    c = Conversation(s)
    try:
        c.say("Run the tests, please.")
        c.prompt("[wait] Run the slow command.")
        c.until_sent(
            lambda t: (
                t.get("hook_event_name") == "PreToolUse" and "sleep" in str(t.get("tool_input"))
            )
        )
        c.prompt("also check the logs")
        c.result()
        c.interrupt_reply("[cut] Explain the retry design.")
        c.say("Run the tests once more.")
    finally:
        code = c.close()
    assert code == 0
    harness.wait_for_dispatchers(s)
    return s


def replies(s):
    return [r for r in s.records() if r["section"] == "assistant_response"]


def test_the_interrupted_reply_is_exported_once_marked(session):
    lines = [json.loads(x) for x in session.transcript().read_text().splitlines()]
    cut = next(i for i, x in enumerate(lines) if "[Request interrupted by user]" in json.dumps(x))
    partial = lines[cut - 1]["message"]["content"][0]["text"]
    assert partial.startswith("PARTIAL-REPLY")
    stops = [t["last_assistant_message"] for t in session.truth() if t["hook_event_name"] == "Stop"]
    assert partial not in stops  # the client never reported it to a hook
    got = [(r["data"]["text"], r["data"].get("interrupted", False)) for r in replies(session)]
    assert [t for t, cut_short in got if cut_short] == [partial]
    assert [t for t, cut_short in got if not cut_short] == stops
    assert THINKING not in json.dumps(session.records())


def test_the_message_typed_while_working_is_a_queued_message(session):
    queued = [r for r in session.records() if r["section"] == "queued_message"]
    assert [r["data"]["text"] for r in queued] == ["also check the logs"]
    assert queued[0]["agent_type"] == "main"


def test_one_session_start_and_end_and_an_intact_chain(session):
    records = session.records()
    assert [r["section"] for r in records].count("session_start") == 1
    assert records[-1]["section"] == "session_end"
    path = session.audit_dir / f"{session.session_id}.jsonl"
    r = session.ways("sensors", "verify", str(path), "--rule", "e2e/all")
    assert r.returncode == 0, r.stdout
