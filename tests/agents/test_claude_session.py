"""The rest of a session, at the builder: permission requests and decisions,
notifications, API failures, the compaction summary, each reply's model and usage, and
which session a resumed or cleared one continues.

Payloads and transcript lines are the real client's (tests/fixtures/claude-code-2.1.332,
recorded by the e2e suite); the transcript grows line by line while the hook events
arrive, and the builder's state goes through JSON between events, as in the dispatcher.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from ways_sensors.agents.claude_code import builder as builder_module
from ways_sensors.agents.claude_code import links
from ways_sensors.agents.claude_code.builder import Builder
from ways_sensors.agents.claude_code.tracker import Tracker
from ways_sensors.state import spool

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "claude-code-2.1.332"
T0 = 1_796_000_000_000_000_000
FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def fixture(name: str) -> dict:
    return json.loads((FIX / name).read_text())


def transcript_lines(name: str) -> list[dict]:
    return [json.loads(x) for x in (FIX / name).read_text().splitlines()]


class Live:
    """A session whose transcript grows while its hook events arrive."""

    def __init__(self, tmp: Path, sid: str = "5e10845e-39a7-4865-8407-ef3e23f8f309") -> None:
        self.folder = tmp / "projects" / "-home-dev-shop"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.sid = sid
        self.path = self.folder / f"{sid}.jsonl"
        self.path.touch()
        self.state: str | None = None
        self.drafts: list = []
        self.ts = time.time_ns() - 60 * 10**9  # the hook's clock: real, a little while ago

    def write(self, *objs: dict) -> None:
        with open(self.path, "a") as f:
            for obj in objs:
                f.write(json.dumps(obj) + "\n")

    def fire(self, event: str, size: int = -1, **fields) -> list:
        payload = {
            "session_id": self.sid,
            "transcript_path": str(self.path),
            "cwd": "/home/dev/shop",
            "hook_event_name": event,
            **fields,
        }
        self.ts += 10**9
        b = Builder(Tracker.from_json(self.state) if self.state else None)
        got = b.build(event, payload, self.ts, size)
        self.state = b.state()
        self.drafts += got
        return got

    def of(self, section: str, **data) -> list:
        return [
            d
            for d in self.drafts
            if d.section == section and all(d.data.get(k) == v for k, v in data.items())
        ]


def usage_sum(*messages: dict) -> dict:
    out = {f: sum(m["usage"][f] for m in messages) for f in FIELDS}
    out["api_calls"] = len(messages)
    return out


def test_a_prompt_answered_yes(tmp_path):
    prompt, call, result, final = transcript_lines("transcript-permission-answered.jsonl")
    [use] = call["message"]["content"]
    request = fixture("PermissionRequest.json")
    note = fixture("Notification-permission_prompt.json")
    s = Live(tmp_path)
    s.fire("SessionStart", size=0, source="startup", model="claude-opus-5-5")
    s.write(prompt)
    s.fire("UserPromptSubmit", prompt="first [write] it", permission_mode="default")
    s.write(call)
    s.fire("PreToolUse", tool_name="Write", tool_input=use["input"], tool_use_id=use["id"],
           permission_mode="default")  # fmt: skip
    suggestions = request["permission_suggestions"]
    s.fire("PermissionRequest", tool_name="Write", tool_input=use["input"],
           permission_mode="default", permission_suggestions=suggestions)  # fmt: skip
    s.fire("Notification", message=note["message"], notification_type=note["notification_type"])
    s.write(result)
    s.fire("PostToolUse", tool_name="Write", tool_input=use["input"], tool_use_id=use["id"],
           tool_response={"type": "create"}, permission_mode="default")  # fmt: skip
    s.write(final)
    s.fire("Stop", last_assistant_message="FINAL-REPLY 35", permission_mode="default")
    s.fire("SessionEnd", reason="other")

    [req] = s.of("permission", phase="request")
    assert (req.data["tool_name"], req.data["tool_use_id"], req.data["mode"]) == (
        "Write",
        use["id"],
        "default",
    )
    assert req.data["input"] == use["input"]
    assert req.data["suggestions"] == request["permission_suggestions"]
    [decision] = s.of("permission", phase="decision")
    assert decision.data["decision"] == "allowed_by_user"
    assert decision.data["detail"] == result["permissionDecision"]
    assert (decision.data["source"], decision.data["mode"]) == ("user_temporary", "default")
    assert decision.timestamp == result["timestamp"]  # when the client wrote it
    [n] = s.of("notification")
    assert (n.data["type"], n.data["message"]) == ("permission_prompt", note["message"])
    [reply] = s.of("assistant_response")
    assert reply.data["model"] == final["message"]["model"]
    assert reply.data["usage"] == usage_sum(call["message"], final["message"])
    assert "usage_missing" not in reply.data


def test_rules_a_refusal_and_an_api_failure(tmp_path):
    """Turns of the cleared session: a Bash call allowed by --allowedTools, a request
    that failed (529), a Write refused in print mode, another Bash call."""
    lines = transcript_lines("transcript-permission-denied.jsonl")
    failure = fixture("StopFailure.json")
    s = Live(tmp_path)
    s.fire("SessionStart", size=0, source="startup")
    for line in lines:
        s.write(line)
        msg = line.get("message") or {}
        content = msg.get("content")
        if line["type"] == "user" and isinstance(content, str):
            s.fire("UserPromptSubmit", prompt=content)
        elif line["type"] == "assistant" and msg.get("model") == "<synthetic>":
            s.fire("StopFailure", error=failure["error"],
                   last_assistant_message=failure["last_assistant_message"])  # fmt: skip
        elif line["type"] == "assistant":
            for use in [b for b in content if b["type"] == "tool_use"]:
                s.fire("PreToolUse", tool_name=use["name"], tool_input=use["input"],
                       tool_use_id=use["id"], permission_mode="default")  # fmt: skip
                if use["name"] == "Write":
                    s.fire("PermissionRequest", tool_name="Write", tool_input=use["input"],
                           permission_mode="default")  # fmt: skip
            if msg.get("stop_reason") == "end_turn":
                s.fire("Stop", last_assistant_message=content[0]["text"])
    s.fire("SessionEnd", reason="other")

    decisions = {d.data["tool_use_id"]: d.data for d in s.of("permission", phase="decision")}
    client = {
        line["message"]["content"][0]["tool_use_id"]: line["permissionDecision"]
        for line in lines
        if "permissionDecision" in line
    }
    assert {k: v["detail"] for k, v in decisions.items()} == client
    assert sorted(v["decision"] for v in decisions.values()) == [
        "allowed_by_rule",
        "allowed_by_rule",
        "denied",
    ]
    [refused] = [v for v in decisions.values() if v["decision"] == "denied"]
    assert refused["tool_name"] == "Write"
    [err] = s.of("error")
    assert (err.data["error"], err.data["text"]) == (
        "server_error",
        failure["last_assistant_message"],
    )
    replies = s.of("assistant_response")
    assert not [r for r in replies if "API Error" in r.data["text"]]
    assert not [r for r in replies if r.data.get("interrupted")]
    calls: dict[str, dict] = {}
    want, group = [], []
    for line in lines:
        msg = line.get("message") or {}
        if line["type"] != "assistant" or msg.get("model") == "<synthetic>":
            continue
        if msg["id"] not in calls:
            group.append(msg)
        calls[msg["id"]] = msg
        if msg.get("stop_reason") == "end_turn":
            want.append(usage_sum(*group))
            group = []
    assert [r.data["usage"] for r in replies] == want
    assert want[0]["api_calls"] == 2  # three lines of one response, and the final one


def test_a_reply_whose_last_call_is_late_waits_for_it(tmp_path):
    prompt, call, result, final = transcript_lines("transcript-permission-answered.jsonl")
    s = Live(tmp_path)
    s.fire("SessionStart", size=0, source="startup")
    s.write(prompt, call, result)
    threading.Timer(0.3, s.write, (final,)).start()  # the client writes it after the hook
    s.fire("Stop", last_assistant_message="FINAL-REPLY 35")
    [reply] = s.of("assistant_response")
    assert reply.data["usage"] == usage_sum(call["message"], final["message"])


def test_a_reply_whose_last_call_never_comes_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(builder_module, "USAGE_WAIT", 0.2)
    prompt, call, result, final = transcript_lines("transcript-permission-answered.jsonl")
    s = Live(tmp_path)
    s.fire("SessionStart", size=0, source="startup")
    s.write(prompt, call, result)
    started = time.monotonic()
    s.fire("Stop", last_assistant_message="FINAL-REPLY 35")
    assert time.monotonic() - started < 5
    [reply] = s.of("assistant_response")
    assert reply.data["usage"] is None and reply.data["usage_missing"] == "pending"
    assert reply.data["text"] == "FINAL-REPLY 35"  # the record went out all the same
    s.write(final)
    s.fire("SessionEnd", reason="other")
    assert len(s.of("assistant_response")) == 1  # never a second one for it


def test_payload_only_replies_say_they_read_no_transcript():
    b = Builder(transcript=False)
    [reply] = b.build("Stop", {"session_id": "x", "last_assistant_message": "hi"}, T0)
    assert reply.data["usage"] is None and reply.data["usage_missing"] == "unreadable"


def test_a_subagent_carries_the_sums_of_its_own_file(tmp_path):
    lines = transcript_lines("transcript-subagent.jsonl")
    path = tmp_path / "agent.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    stop = {**fixture("SubagentStop.json"), "agent_transcript_path": str(path)}
    s = Live(tmp_path)
    s.fire("SubagentStart", agent_id=stop["agent_id"], agent_type="general-purpose")
    s.fire("SubagentStop", **{k: v for k, v in stop.items() if k != "hook_event_name"})
    calls = {}
    for line in lines:
        if line["type"] == "assistant":
            calls[line["message"]["id"]] = line["message"]
    want = usage_sum(*calls.values())
    [sub] = s.of("subagent", phase="stop")
    [reply] = s.of("assistant_response")
    assert sub.data["usage"] == reply.data["usage"] == want and want["api_calls"] == 2
    assert reply.agent_type == "general-purpose" and sub.data["model"] == reply.data["model"]
    decisions = s.of("permission", phase="decision")
    assert [d.agent_id for d in decisions] == [stop["agent_id"]]  # its Bash call, its agent


def test_an_internal_agent_without_a_file_says_so(tmp_path):
    stop = fixture("SubagentStop-internal.json")
    s = Live(tmp_path)
    s.fire("SubagentStop", **{k: v for k, v in stop.items() if k != "hook_event_name"})
    [reply] = s.of("assistant_response")
    assert reply.agent_type == "internal"
    assert reply.data["usage"] is None and reply.data["usage_missing"] == "absent"


def test_the_compaction_summary(tmp_path):
    post = fixture("PostCompact.json")
    s = Live(tmp_path)
    [d] = s.fire("PostCompact", trigger=post["trigger"], compact_summary=post["compact_summary"])
    assert (d.section, d.data["phase"], d.data["trigger"], d.data["summary"]) == (
        "compaction",
        "summary",
        "manual",
        post["compact_summary"],
    )


def test_a_classifier_refusal_is_one_decision(tmp_path):
    """PermissionDenied (auto mode) names its call; the transcript's own reject of the
    same call later is not a second decision."""
    s = Live(tmp_path)
    s.fire("PreToolUse", tool_name="Bash", tool_input={"command": "curl x"}, tool_use_id="t1",
           permission_mode="auto")  # fmt: skip
    s.fire("PermissionDenied", tool_name="Bash", tool_input={"command": "curl x"},
           tool_use_id="t1", reason="[Data Exfiltration]", permission_mode="auto")  # fmt: skip
    s.write({"type": "user", "uuid": "u1", "permissionDecision": {"decision": "reject"},
             "message": {"role": "user", "content": [{"type": "tool_result",
                                                      "tool_use_id": "t1"}]}})  # fmt: skip
    s.fire("Stop", last_assistant_message="ok")
    [d] = s.of("permission")
    assert (d.data["decision"], d.data["source"], d.data["reason"], d.data["mode"]) == (
        "denied",
        "classifier",
        "[Data Exfiltration]",
        "auto",
    )


# --- previous_session_id ---------------------------------------------------------------


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "agent-ways"


def test_a_resume_names_the_session_its_transcript_held(tmp_path, state):
    s = Live(tmp_path)
    old = transcript_lines("transcript-permission-answered.jsonl")
    s.write(*[{**x, "sessionId": s.sid} for x in old])
    size = s.path.stat().st_size
    s.write({"type": "mode", "sessionId": "someone-else"})  # written after the hook ran
    resume = fixture("SessionStart-resume.json")
    [start] = s.fire("SessionStart", size=size, source="resume",
                     seconds_since_last_response=resume["seconds_since_last_response"])  # fmt: skip
    assert start.data["previous_session_id"] == s.sid


def test_a_startup_names_none(tmp_path, state):
    [start] = Live(tmp_path).fire("SessionStart", size=0, source="startup")
    assert "previous_session_id" not in start.data


def test_a_fork_names_the_session_its_copied_lines_came_from(tmp_path, state):
    s = Live(tmp_path)
    s.write({"type": "assistant", "uuid": "a", "sessionId": s.sid,
             "requestSessionId": "0b6f1c9e-aaaa", "message": {"content": []}})  # fmt: skip
    [start] = s.fire("SessionStart", size=-1, source="fork")
    assert start.data["previous_session_id"] == "0b6f1c9e-aaaa"
    [bare] = Live(tmp_path / "b", sid="f0").fire("SessionStart", size=-1, source="fork")
    assert bare.data["previous_session_id"] is None  # 2.1.332 at a --fork-session start


def test_clear_links_through_the_old_sessions_note(tmp_path, state):
    end, start = fixture("SessionEnd-clear.json"), fixture("SessionStart-clear.json")
    old = Live(tmp_path, sid=end["session_id"])
    new = Live(tmp_path, sid=start["session_id"])
    old.fire("SessionEnd", reason="clear")
    assert list((state / "links").iterdir())  # the note, 0600 in a 0700 folder
    assert oct((state / "links").stat().st_mode & 0o777) == "0o700"
    new.ts = old.ts
    [first] = new.fire("SessionStart", size=-1, source="clear")
    assert first.data["previous_session_id"] == end["session_id"]
    assert not list((state / "links").iterdir())  # taken
    [again] = Live(tmp_path, sid="third").fire("SessionStart", size=-1, source="clear")
    assert again.data["previous_session_id"] is None


def test_clear_links_through_the_old_spool_when_its_end_is_not_built_yet(tmp_path, state):
    end = fixture("SessionEnd-clear.json")
    new = Live(tmp_path, sid=fixture("SessionStart-clear.json")["session_id"])
    payload = {**end, "transcript_path": str(new.folder / f"{end['session_id']}.jsonl")}
    spool.append(end["session_id"], "SessionEnd", new.ts, "/home/dev/shop",
                 json.dumps(payload).encode())  # fmt: skip
    [first] = new.fire("SessionStart", size=-1, source="clear")
    assert first.data["previous_session_id"] == end["session_id"]


def test_clear_ignores_an_end_outside_the_window(tmp_path, state):
    end = fixture("SessionEnd-clear.json")
    old = Live(tmp_path, sid=end["session_id"])
    old.fire("SessionEnd", reason="clear")
    new = Live(tmp_path, sid="later")
    new.ts = old.ts + links.WINDOW_NS
    [first] = new.fire("SessionStart", size=-1, source="clear")
    assert first.data["previous_session_id"] is None


@pytest.mark.parametrize("section", ["permission", "notification", "error"])
def test_fire_has_an_example_of_each_new_section(install, tmp_path, section):
    install.sensor(
        "probe",
        f"rules:\n  r:\n    sections: [{section}]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/o'}}}}\n",
    )
    r = install.ways("sensors", "fire", "probe/r", "--section", section, "--dry-run")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert (rec["section"], rec["test"]) == (section, True)


def test_a_fifo_named_by_the_payload_is_never_waited_on(tmp_path, state):
    """The paths come from the payload: a FIFO as the subagent's file, or as the
    transcript a resumed or forked start is linked through, is skipped, not opened for
    a writer that never comes."""
    import os

    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    got: list = []

    def build() -> None:
        stop = {"session_id": "x", "agent_id": "a1", "agent_transcript_path": fifo}
        got.extend(Builder().build("SubagentStop", stop, T0))
        for source in ("resume", "fork"):
            start = {"session_id": "x", "source": source, "transcript_path": fifo}
            got.append(links.previous(start, 10, T0))

    worker = threading.Thread(target=build, daemon=True)
    worker.start()
    worker.join(20)
    assert not worker.is_alive()
    assert [d.section for d in got[:2]] == ["subagent", "assistant_response"]
    assert got[1].data["usage_missing"] == "unreadable"
    assert got[2:] == [None, None]


def test_a_request_joins_its_call_with_or_without_a_save_between():
    """A call's key is made only when it is compared or saved (tracker._keyed): a
    request joins the call either way, and the saved state holds the key itself."""
    from ways_sensors.agents.claude_code.permissions import call_key

    tool_input = {"command": "rm -rf build/", "description": "clean"}
    call = dict(tool_name="Bash", tool_input=tool_input, permission_mode="default")
    for save_between in (False, True):
        b = Builder(transcript=False)
        b.build("PreToolUse", {**call, "tool_use_id": "toolu_01"}, T0)
        b.build("PreToolUse", {**call, "tool_name": "Read", "tool_use_id": "toolu_02"}, T0)
        if save_between:
            saved = json.loads(b.state())
            assert [c[2] for c in saved["calls"]] == [
                call_key("Bash", tool_input, None),
                call_key("Read", tool_input, None),
            ]
            b = Builder(Tracker.from_json(b.state()), transcript=False)
        [req] = b.build("PermissionRequest", call, T0 + 1)
        assert (req.data["phase"], req.data["tool_use_id"]) == ("request", "toolu_01")
