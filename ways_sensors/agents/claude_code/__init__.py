"""The Claude Code adapter. This module is its face (agents.protocols.Face): fields,
events and sections, for the hook's fast path.

The hook imports this package on every event, so it holds only the face: constants and
one function, no imports (the `Callable` annotation is a string, read by the type
checker only). A separate face module would cost the hook one more import (about
0.1 ms a run), since importing it imports this package anyway. The rest is the
builder half, behind adapter.py (agents.protocols.Adapter):

adapter.py     what the registry hands out to the dispatcher, blocking path, commands
builder.py     hook payloads -> Drafts, one handler per event
tracker.py     what a session's records need from the transcript, across events
transcript.py  reading the transcript JSONL robustly
replay.py      a recorded transcript played back as hook payloads (`ways sensors test`)
wiring.py      what `ways reconcile` wires into `settings.json`, and where
examples.py    example payloads per section (`ways sensors fire`)
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

NAME = "claude-code"

EVENT_FIELD = b"hook_event_name"
SESSION_FIELD = b"session_id"
TRANSCRIPT_FIELD = b"transcript_path"
PROJECT_ENV = "CLAUDE_PROJECT_DIR"  # Claude Code sets it for hooks; `cwd` follows `cd`
START_EVENT = "SessionStart"
END_EVENT = "SessionEnd"

# hook event -> sections that make the hook hand the event off (SPEC section 4's table,
# plus: SessionEnd yields the replies and queued messages the transcript still holds,
# SessionStart tells the dispatcher where a resumed transcript's new part begins, and
# every event that reads the transcript yields the permission decisions written there;
# PreToolUse joins a later permission request to its call).
EVENT_SECTIONS = {
    "UserPromptSubmit": ("user_prompt",),
    "PreToolUse": ("tool_call", "permission"),
    "PermissionRequest": ("permission",),
    "PermissionDenied": ("permission",),
    "PostToolUse": ("tool_result", "queued_message", "permission"),
    "PostToolUseFailure": ("tool_result", "queued_message", "permission"),
    "Notification": ("notification",),
    "Stop": ("assistant_response", "queued_message", "permission"),
    "StopFailure": ("error", "assistant_response", "queued_message", "permission"),
    "SubagentStart": ("subagent",),
    "SubagentStop": ("subagent", "assistant_response", "permission"),
    "SessionStart": ("session_start", "assistant_response", "queued_message"),
    "SessionEnd": ("session_end", "assistant_response", "queued_message", "permission"),
    "PreCompact": ("compaction",),
    "PostCompact": ("compaction",),
}


def sections_for(event: str, field: "Callable[[bytes], str | None]") -> tuple[str, ...]:
    """The event's sections; a SessionStart after a compaction also yields one."""
    sections = EVENT_SECTIONS.get(event, ())
    if event == "SessionStart" and field(b"source") == "compact":
        sections = (*sections, "compaction")
    return sections
