"""GitHub Copilot CLI, the builder half (agents.protocols.Adapter): what the registry hands out.

Copilot CLI's session files are not read (their format is not documented): `ways
sensors test` cannot replay a Copilot CLI session.
"""

from __future__ import annotations

from ..drafting import event_of
from ..kit.adapter import Offline, unreplayable
from . import NAME
from .builder import EVENTS as CAMEL_EVENTS
from .builder import HANDLERS, Builder
from .wiring import EVENTS as WIRED_EVENTS
from .wiring import OWN_FILE, config_home, settings_path, unwire, wire

EVENTS = frozenset(HANDLERS) | frozenset(CAMEL_EVENTS)

__all__ = [
    "NAME",
    "EVENTS",
    "WIRED_EVENTS",
    "OWN_FILE",
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

COMMON = {"session_id": "ways-fire", "timestamp": "2026-11-29T11:40:02.123Z", "cwd": "/repo"}
EXAMPLES: dict[str, dict[str, Any]] = {
    "user_prompt": {"hook_event_name": "UserPromptSubmit", "prompt": "Run the tests."},
    "tool_call": {
        "hook_event_name": "PreToolUse",
        "tool_name": "bash",
        "tool_input": {"command": "npm test"},
    },
    "tool_result": {
        "hook_event_name": "PostToolUse",
        "tool_name": "bash",
        "tool_input": {"command": "npm test"},
        "tool_result": {"result_type": "success", "text_result_for_llm": "12 passed\n"},
    },
    "subagent": {
        "hook_event_name": "SubagentStop",
        "agent_name": "explore",
        "stop_reason": "end_turn",
    },
    "compaction": {"hook_event_name": "PreCompact", "trigger": "manual"},
    "session_start": {"hook_event_name": "SessionStart", "source": "startup"},
    "session_end": {"hook_event_name": "SessionEnd", "reason": "complete"},
}


_kit = Offline(Builder, COMMON, EXAMPLES, blank=None)
new_builder, offline_drafts, example = _kit.new_builder, _kit.offline_drafts, _kit.example


find_session_file, replay = unreplayable("Copilot CLI")


TYPE_CHECKING = False
if TYPE_CHECKING:  # the type checker holds the adapter to its Protocol
    from typing import Any

    import ways_sensors.agents.copilot.adapter as _adapter

    from ..protocols import Adapter

    _adapter_checked: Adapter = _adapter
