"""Cursor, the builder half (agents.protocols.Adapter): what the registry hands out.

Cursor's session files are not read (their format is not documented): `ways sensors
test` cannot replay a Cursor conversation.
"""

from __future__ import annotations

from ..drafting import event_of
from ..kit.adapter import Offline, unreplayable
from . import NAME
from .builder import HANDLERS, Builder
from .wiring import EVENTS as WIRED_EVENTS
from .wiring import config_home, settings_path, unwire, wire

EVENTS = frozenset(HANDLERS)

__all__ = [
    "NAME",
    "EVENTS",
    "WIRED_EVENTS",
    "new_builder",
    "event_of",
    "offline_drafts",
    "example",
    "find_session_file",
    "replay",
    "config_home",
    "settings_path",
    "wire",
    "unwire",
]

COMMON = {
    "conversation_id": "ways-fire",
    "generation_id": "gen-4f1c",
    "workspace_roots": ["/home/dev/shop"],
    "model": "claude-sonnet-4",
    "cursor_version": "2.0.77",
}
EXAMPLES: dict[str, dict[str, Any]] = {
    "user_prompt": {"hook_event_name": "beforeSubmitPrompt", "prompt": "Run the tests."},
    "tool_call": {
        "hook_event_name": "preToolUse",
        "tool_name": "Shell",
        "tool_input": {"command": "npm test"},
        "tool_use_id": "tool_9a8b",
    },
    "tool_result": {
        "hook_event_name": "postToolUse",
        "tool_name": "Shell",
        "tool_input": {"command": "npm test"},
        "tool_output": '{"output": "12 passed"}',
        "tool_use_id": "tool_9a8b",
    },
    "assistant_response": {"hook_event_name": "afterAgentResponse", "text": "Tests pass."},
    "subagent": {"hook_event_name": "subagentStart", "subagent_type": "explore"},
    "compaction": {"hook_event_name": "preCompact", "trigger": "manual"},
    "session_start": {"hook_event_name": "sessionStart"},
    "session_end": {"hook_event_name": "sessionEnd", "reason": "completed"},
}


_kit = Offline(Builder, COMMON, EXAMPLES, blank=None)
new_builder, offline_drafts, example = _kit.new_builder, _kit.offline_drafts, _kit.example


find_session_file, replay = unreplayable("Cursor")


TYPE_CHECKING = False
if TYPE_CHECKING:  # the type checker holds the adapter to its Protocol
    from typing import Any

    import ways_sensors.agents.cursor.adapter as _adapter

    from ..protocols import Adapter

    _adapter_checked: Adapter = _adapter
