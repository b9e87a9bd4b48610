"""Gemini CLI, the builder half (agents.protocols.Adapter): what the registry hands out."""

from __future__ import annotations

from ..drafting import event_of
from ..kit.adapter import Offline, session_file_check
from . import NAME, chats
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
    "is_session_file",
    "replay",
    "config_home",
    "settings_path",
    "wire",
    "unwire",
]

COMMON = {
    "session_id": "ways-fire",
    "transcript_path": "",
    "cwd": "/home/dev/shop",
    "timestamp": "2026-11-29T22:15:29.420Z",
}
EXAMPLES: dict[str, dict[str, Any]] = {
    "user_prompt": {"hook_event_name": "BeforeAgent", "prompt": "Run the webhook tests."},
    "tool_call": {
        "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command",
        "tool_input": {"command": "npm test -- webhooks", "description": "run the tests"},
    },
    "tool_result": {
        "hook_event_name": "AfterTool",
        "tool_name": "run_shell_command",
        "tool_input": {"command": "npm test -- webhooks", "description": "run the tests"},
        "tool_response": {"llmContent": "Output: 12 passed", "returnDisplay": "12 passed"},
    },
    "assistant_response": {
        "hook_event_name": "AfterAgent",
        "prompt": "Run the webhook tests.",
        "prompt_response": "The webhook tests pass.",
        "stop_hook_active": False,
    },
    "compaction": {"hook_event_name": "PreCompress", "trigger": "manual"},
    "session_start": {"hook_event_name": "SessionStart", "source": "startup"},
    "session_end": {"hook_event_name": "SessionEnd", "reason": "exit"},
}


_kit = Offline(Builder, COMMON, EXAMPLES, blank={"transcript_path": ""})
new_builder, offline_drafts, example = _kit.new_builder, _kit.offline_drafts, _kit.example


def find_session_file(project: str, session: str | None = None) -> str | None:
    return chats.find_chat(session, project)


# A chat file: `.../chats/session-*.jsonl`, or a first line that is a chat header.
is_session_file = session_file_check("session-", b'"projectHash"', b'"sessionId"')


def replay(path: str) -> Replay:
    from .replay import Replay  # not on the blocking hook's path (tempfile, typing)

    return Replay(path)


TYPE_CHECKING = False
if TYPE_CHECKING:  # the type checker holds the adapter to its Protocol
    from typing import Any

    import ways_sensors.agents.gemini.adapter as _adapter

    from ..protocols import Adapter
    from .replay import Replay

    _adapter_checked: Adapter = _adapter
