"""A built-in example hook payload per section, for `ways sensors fire` without --input.

Shapes follow what Claude Code sends (the recorded payloads in tests/fixtures/), with
invented values.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

COMMON = {
    "session_id": "ways-fire",
    "transcript_path": "",
    "cwd": "/home/dev/shop",
    "prompt_id": "d41f7c09-8e2a-4b6d-a1c3-5f9e0b2d7c44",
}

EXAMPLES: dict[str, dict[str, Any]] = {
    "user_prompt": {
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Add retry with exponential backoff to the webhook sender.",
    },
    "tool_call": {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "npm test -- webhooks"},
        "tool_use_id": "toolu_01De6FgH8iJk0LmN2OpQ4rSt",
    },
    "tool_result": {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "npm test -- webhooks"},
        "tool_response": {"stdout": "12 passed", "stderr": ""},
        "tool_use_id": "toolu_01De6FgH8iJk0LmN2OpQ4rSt",
    },
    "assistant_response": {
        "hook_event_name": "Stop",
        "last_assistant_message": "send() now retries up to 5 times.",
    },
    "subagent": {
        "hook_event_name": "SubagentStart",
        "agent_id": "a3f9c2e18b7d4a6e0",
        "agent_type": "Explore",
    },
    "compaction": {
        "hook_event_name": "PreCompact",
        "trigger": "manual",
        "custom_instructions": "keep the retry design decisions",
    },
    "session_start": {
        "hook_event_name": "SessionStart",
        "source": "startup",
        "model": "claude-opus-5",
    },
    "session_end": {"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"},
    "way_event": {"hook_event_name": "WayEvent", "kind": "fired", "way": "example"},
    "queued_message": {
        "hook_event_name": "QueuedMessage",
        "text": "also cover the 429 Retry-After case",
    },
    "permission": {
        "hook_event_name": "PermissionRequest",
        "permission_mode": "default",
        "tool_name": "Write",
        "tool_input": {"file_path": "/home/dev/notes/retry.md", "content": "backoff: 2^n s"},
        "permission_suggestions": [
            {"type": "addDirectories", "directories": ["/home/dev/notes"], "destination": "session"}
        ],
    },
    "notification": {
        "hook_event_name": "Notification",
        "message": "Claude needs your permission",
        "notification_type": "permission_prompt",
    },
    "error": {
        "hook_event_name": "StopFailure",
        "error": "server_error",
        "last_assistant_message": "API Error: 529 Overloaded. This is a server-side issue.",
    },
}
