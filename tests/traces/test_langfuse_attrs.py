"""What Langfuse reads of a session (its OpenTelemetry intake reads `langfuse.*` first):
a session through the real hook and dispatcher reaches a loopback OTLP/HTTP receiver
(the official protobuf definitions decode it) with the session and user on every span,
the run's first prompt and last reply as the trace's input and output on its root, and
each chat and tool span's own input and output, beside the OpenInference names."""

from __future__ import annotations

from ..helpers import wait_until
from ..servers import Server
from ..sessions import KNOWN, SID, ScriptedSession
from .receive import all_spans, attrs, rule

USER = "quokka-user"


def test_langfuse_reads_session_user_and_the_trace_s_input_and_output(install, tmp_path):
    install.config(f"ways:\n  identity:\n    id: {USER}\n")
    receiver = Server("otlp-traces")
    try:
        rule(install, receiver)
        ScriptedSession(install, tmp_path / "t").play()
        assert wait_until(
            lambda: any(s.name == "invoke_agent claude-code" for s in all_spans(receiver))
        ), receiver.errors
        got = all_spans(receiver)
    finally:
        receiver.close()
    for s in got:
        a = attrs(s)
        assert (a["langfuse.session.id"], a["session.id"]) == (SID, SID), s.name
        assert (a["user.id"], a["langfuse.user.id"]) == (USER, USER), s.name

    [root] = [s for s in got if not s.parent_span_id]
    a = attrs(root)
    assert a["langfuse.observation.type"] == "agent"
    assert (a["langfuse.trace.input"], a["langfuse.trace.output"]) == (
        KNOWN["prompt"],
        KNOWN["interrupted"],
    )
    assert a["langfuse.observation.input"] == a["input.value"] == KNOWN["prompt"]
    assert a["langfuse.observation.output"] == a["output.value"] == KNOWN["interrupted"]
    assert not [s for s in got if s.parent_span_id and "langfuse.trace.input" in attrs(s)]

    chats = [attrs(s) for s in got if s.name.startswith("chat")]
    [first] = [c for c in chats if KNOWN["reply"] in c.get("output.value", "")]
    assert first["langfuse.observation.type"] == "generation"
    assert first["langfuse.observation.input"] == KNOWN["prompt"]
    assert first["langfuse.observation.output"] == first["output.value"]
    assert KNOWN["reply"] in first["langfuse.observation.output"]

    tools = [attrs(s) for s in got if s.name == "execute_tool Bash"]
    ok = next(t for t in tools if KNOWN["output"] in t.get("output.value", ""))
    assert ok["langfuse.observation.type"] == "tool"
    assert KNOWN["input"] in ok["langfuse.observation.input"]
    assert ok["langfuse.observation.output"] == ok["output.value"]
