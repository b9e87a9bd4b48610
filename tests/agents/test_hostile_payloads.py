"""Every adapter's builder takes any payload an agent (or anyone) sends without raising:
wrong types, missing fields, junk in the session file. A builder that raised would lose
the entry (the dispatcher logs it and moves on)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ways_sensors import agents

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
KEYS = ["tool_name", "tool_input", "tool_response", "tool_use_id", "prompt", "prompt_response",
        "last_assistant_message", "turn_id", "agent_id", "agent_type", "timestamp", "trigger",
        "source", "reason", "tool_output", "tool_result", "toolArgs", "toolResult", "error",
        "mcp_context", "generation_id", "command", "edits", "transcript_path"]  # fmt: skip
NEW = [n for n in agents.names() if n != agents.DEFAULT]


@pytest.mark.parametrize("name", NEW)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_builders_never_raise(name, data, tmp_path_factory):
    adapter = agents.adapter(name)
    event = data.draw(st.sampled_from(sorted(adapter.EVENTS)))
    payload = data.draw(st.dictionaries(st.sampled_from(KEYS), json_values, max_size=8))
    junk = data.draw(st.binary(max_size=200))
    path = tmp_path_factory.mktemp("s") / "session.jsonl"
    path.write_bytes(junk)
    if data.draw(st.booleans()):
        payload["transcript_path"] = str(path)
    builder = adapter.new_builder()
    for size in (-1, len(junk)):
        drafts = builder.build(event, {**payload, "hook_event_name": event}, 1, size)
        assert all(d.agent == name for d in drafts)
    builder.state()
    adapter.new_builder(builder.state())  # the state survives a restart
