"""The GitHub Copilot CLI adapter. This module is its face (agents.protocols.Face), for the
hook's fast path: constants and one function, no imports.

Copilot CLI sends one of two payload dialects, chosen by how an event is spelled in
its hooks file: PascalCase events get snake_case payloads that name the event
(`hook_event_name`, `session_id`, `tool_name`, `tool_input`, `tool_result`, ISO
`timestamp`); camelCase events get camelCase payloads that name no event (`sessionId`,
`toolName`, `toolArgs`, a millisecond `timestamp`). `ways reconcile` wires the
PascalCase events, and `subagentStart`, which has only the camelCase form, with the
event in argv (`--event subagentStart`). Copilot CLI cannot run on this machine: the
adapter is built and tested from its documented payloads (tests/fixtures/copilot-docs/).
The builder half:

adapter.py     what the registry hands out
builder.py     hook payloads (both dialects) -> Drafts; calls paired by order
wiring.py      what `ways reconcile --agent copilot` writes into ~/.copilot/hooks/
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

NAME = "copilot"

EVENT_FIELD = b"hook_event_name"
SESSION_FIELD = b"session_id"
ALT_SESSION_FIELD = b"sessionId"  # the camelCase dialect's (hook.py reads it second)
TRANSCRIPT_FIELD = b"transcript_path"
PROJECT_ENV = "COPILOT_PROJECT_DIR"  # else the hook's working directory, the repository
START_EVENT = "SessionStart"
END_EVENT = "SessionEnd"

EVENT_SECTIONS = {
    "SessionStart": ("session_start",),
    "SessionEnd": ("session_end",),
    "UserPromptSubmit": ("user_prompt",),
    "PreToolUse": ("tool_call",),
    "PostToolUse": ("tool_result",),
    "PostToolUseFailure": ("tool_result",),
    "SubagentStop": ("subagent",),
    "PreCompact": ("compaction",),
    # the camelCase dialect (its payloads name no event: `--event NAME` does)
    "sessionStart": ("session_start",),
    "sessionEnd": ("session_end",),
    "userPromptSubmitted": ("user_prompt",),
    "preToolUse": ("tool_call",),
    "postToolUse": ("tool_result",),
    "postToolUseFailure": ("tool_result",),
    "subagentStart": ("subagent",),
    "subagentStop": ("subagent",),
    "preCompact": ("compaction",),
}


def sections_for(event: str, field: "Callable[[bytes], str | None]") -> tuple[str, ...]:
    return EVENT_SECTIONS.get(event, ())
