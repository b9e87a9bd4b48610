"""Planting a canary or secrets in every field an agent sends, for the tests that look
for them at rest (test_canary_at_rest.py, tests/store/)."""

from __future__ import annotations

from typing import Any

# What routes an event and names things: never planted with a canary or a secret
# (test_canary_at_rest.py says why), so the session still plays as recorded.
KEEP = frozenset(
    {
        "hook_event_name",
        "hookEventName",
        "session_id",
        "sessionId",
        "conversation_id",
        "generation_id",
        "transcript_path",
        "transcriptPath",
        "agent_transcript_path",
        "cwd",
        "workspace_roots",
        "tool_use_id",
        "toolUseId",
        "call_id",
        "turn_id",
        "prompt_id",
        "agent_id",
        "id",
        "uuid",
        "parentUuid",
        "type",
        "role",
        "timestamp",
        "model",
        "$set",
        # names the agent picks from its own set (projection.py keeps them as names)
        "tool_name",
        "toolName",
        "permission_mode",
        "trigger",
        "source",
        "agent_type",
        "notification_type",
        "status",
    }
)


def planted(value: Any, text: str, key: str = "") -> Any:
    """`value` with ` <text>` after every string a key outside KEEP holds."""
    if isinstance(value, dict):
        return {k: planted(v, text, k) for k, v in value.items()}
    if isinstance(value, list):
        return [planted(v, text, key) for v in value]
    if isinstance(value, str) and key not in KEEP:
        return f"{value} {text}"
    return value
