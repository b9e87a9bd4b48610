"""The Cursor adapter. This module is its face (agents.protocols.Face), for the hook's fast
path: constants and one function, no imports.

Cursor's agent hooks (`~/.cursor/hooks.json`, `{"version": 1, "hooks": {"<event>":
[{"command"}]}}`) send camelCase event names in `hook_event_name`, the session as
`conversation_id`, one prompt's run as `generation_id`, and `cursor_version`,
`workspace_roots`, `model`. Cursor also runs the hooks of Claude Code's settings with
its own payloads: the hook recognises them (hook.py) and reads them through this face.
Cursor cannot run on this machine: the adapter is built and tested from Cursor's
documented payload shapes (tests/fixtures/cursor-docs/). The builder half:

adapter.py     what the registry hands out
builder.py     hook payloads -> Drafts; the generic and the specific tool events deduped
wiring.py      what `ways reconcile --agent cursor` writes into hooks.json
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

NAME = "cursor"

EVENT_FIELD = b"hook_event_name"
SESSION_FIELD = b"conversation_id"
TRANSCRIPT_FIELD = b"transcript_path"
PROJECT_ENV = "CURSOR_PROJECT_DIR"  # else the hook's working directory, the workspace
START_EVENT = "sessionStart"
END_EVENT = "sessionEnd"

EVENT_SECTIONS = {
    "sessionStart": ("session_start",),
    "sessionEnd": ("session_end",),
    "beforeSubmitPrompt": ("user_prompt",),
    "preToolUse": ("tool_call",),
    "postToolUse": ("tool_result",),
    "postToolUseFailure": ("tool_result",),
    "beforeShellExecution": ("tool_call",),
    "afterShellExecution": ("tool_result",),
    "beforeMCPExecution": ("tool_call",),
    "afterMCPExecution": ("tool_result",),
    "beforeReadFile": ("tool_call",),
    "afterFileEdit": ("tool_result",),
    "afterAgentResponse": ("assistant_response",),
    "subagentStart": ("subagent",),
    "subagentStop": ("subagent",),
    "preCompact": ("compaction",),
}


def sections_for(event: str, field: "Callable[[bytes], str | None]") -> tuple[str, ...]:
    return EVENT_SECTIONS.get(event, ())
