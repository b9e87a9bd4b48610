"""The Codex CLI adapter. This module is its face (agents.protocols.Face), for the hook's
fast path: constants and one function, no imports.

Codex's hooks (`~/.codex/hooks.json`, Claude Code's shape) send Claude-like payloads:
`hook_event_name`, `session_id`, `transcript_path` (the rollout), plus `turn_id`,
`model` and `permission_mode`. A shell call is reported as `tool_name: "Bash"` with
`tool_input.command`. A failing command is an ordinary PostToolUse with no exit code:
its rollout holds it, so PostToolUse also yields the tool_results parked until the
rollout said how the command ended, and Stop and SessionEnd release what is left.
Codex sets no project variable: the hook runs in the project. The builder half:

adapter.py     what the registry hands out
builder.py     hook payloads -> Drafts; failures recovered from the rollout
rollout.py     reading the rollout JSONL: command outcomes, and the replay
wiring.py      what `ways reconcile --agent codex` writes into hooks.json
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

NAME = "codex"

EVENT_FIELD = b"hook_event_name"
SESSION_FIELD = b"session_id"
TRANSCRIPT_FIELD = b"transcript_path"
PROJECT_ENV = "CODEX_PROJECT_DIR"  # not set by Codex: the hook's working directory is used
START_EVENT = "SessionStart"
END_EVENT = "SessionEnd"

EVENT_SECTIONS = {
    "UserPromptSubmit": ("user_prompt",),
    "PreToolUse": ("tool_call",),
    "PostToolUse": ("tool_result",),
    "Stop": ("assistant_response", "tool_result"),
    "SubagentStart": ("subagent",),
    "SubagentStop": ("subagent", "assistant_response", "tool_result"),
    "SessionStart": ("session_start",),
    "SessionEnd": ("session_end", "tool_result"),
    "PreCompact": ("compaction",),
    "PostCompact": ("compaction",),
}


def sections_for(event: str, field: "Callable[[bytes], str | None]") -> tuple[str, ...]:
    return EVENT_SECTIONS.get(event, ())
