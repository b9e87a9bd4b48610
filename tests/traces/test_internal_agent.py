"""An internal agent of Claude Code (compaction's, with an empty `agent_type`): the
client keeps no file for it, so its reply's model and tokens are nowhere on disk. Its
record says so (`usage_missing: absent`, not the `unreadable` of a file too large or a
payload-only install) and so does its `chat` span (`ways.usage_missing`), so a trace
viewer shows why the span has no tokens rather than an empty span."""

from __future__ import annotations

import json

from ..conftest import FIXTURES
from ..helpers import SID, play, wait_until
from ..servers import Server
from .receive import all_spans, attrs, rule


def test_an_internal_agent_s_chat_span_says_its_tokens_are_absent(install, tmp_path):
    internal = json.loads((FIXTURES / "SubagentStop-internal.json").read_text())
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    internal.update(
        session_id=SID,
        transcript_path=str(transcript),
        agent_transcript_path=str(tmp_path / "subagents" / "agent-none.jsonl"),
    )
    receiver = Server("otlp-traces")
    try:
        rule(install, receiver)
        play(install, ["SessionStart"], transcript_path=str(transcript))
        r = install.hook(internal)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        play(install, ["SessionEnd"], transcript_path=str(transcript))
        assert wait_until(lambda: any(s.name.startswith("chat") for s in all_spans(receiver))), (
            receiver.errors
        )
        chats = [attrs(s) for s in all_spans(receiver) if s.name.startswith("chat")]
    finally:
        receiver.close()
    [chat] = [c for c in chats if c.get("output.value") == internal["last_assistant_message"]]
    assert chat["ways.usage_missing"] == "absent"
    assert "gen_ai.usage.input_tokens" not in chat
