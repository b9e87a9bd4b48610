"""Codex CLI, the builder half (agents.protocols.Adapter): what the registry hands out."""

from __future__ import annotations

from ..drafting import event_of
from ..kit.adapter import Offline, session_file_check
from . import NAME
from .builder import HANDLERS, Builder
from .rollout import find_rollout
from .wiring import EVENTS as WIRED_EVENTS
from .wiring import NOTE, config_home, settings_path, unwire, wire

EVENTS = frozenset(HANDLERS)

__all__ = [
    "NAME",
    "EVENTS",
    "WIRED_EVENTS",
    "NOTE",
    "new_builder",
    "event_of",
    "offline_drafts",
    "example",
    "find_session_file",
    "is_session_file",
    "replay",
    "config_home",
    "settings_path",
    "wire",
    "unwire",
]

COMMON = {
    "session_id": "ways-fire",
    "transcript_path": None,
    "cwd": "/home/dev/shop",
    "turn_id": "01a22960-edc3-73d3-a936-aadeb92b6dfb",
    "model": "gpt-5-codex",
    "permission_mode": "default",
}
EXAMPLES: dict[str, dict[str, Any]] = {
    "user_prompt": {"hook_event_name": "UserPromptSubmit", "prompt": "Run the webhook tests."},
    "tool_call": {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "npm test -- webhooks"},
        "tool_use_id": "call_Hq2xN8aV0rT4",
    },
    "tool_result": {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "npm test -- webhooks"},
        "tool_response": "12 passed\n",
        "tool_use_id": "call_Hq2xN8aV0rT4",
    },
    "assistant_response": {
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "The webhook tests pass.",
    },
    "subagent": {
        "hook_event_name": "SubagentStart",
        "agent_id": "agent-7f3c",
        "agent_type": "worker",
    },
    "compaction": {"hook_event_name": "PreCompact", "trigger": "manual"},
    "session_start": {"hook_event_name": "SessionStart", "source": "startup"},
    "session_end": {"hook_event_name": "SessionEnd", "reason": "other"},
}


_kit = Offline(Builder, COMMON, EXAMPLES, blank={"transcript_path": None})
new_builder, offline_drafts, example = _kit.new_builder, _kit.offline_drafts, _kit.example


def find_session_file(project: str, session: str | None = None) -> str | None:
    return find_rollout(session, None if session else project)


# A rollout: `.../sessions/YYYY/MM/DD/rollout-*.jsonl`, or a first line of type session_meta.
is_session_file = session_file_check("rollout-", b'"type":"session_meta"')


def replay(path: str) -> Replay:
    from .replay import Replay  # not on the blocking hook's path

    return Replay(path)


TYPE_CHECKING = False
if TYPE_CHECKING:  # the type checker holds the adapter to its Protocol
    from typing import Any

    import ways_sensors.agents.codex.adapter as _adapter

    from ..protocols import Adapter
    from .replay import Replay

    _adapter_checked: Adapter = _adapter
