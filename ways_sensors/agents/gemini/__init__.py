"""The Gemini CLI adapter. This module is its face (agents.protocols.Face), for the hook's
fast path: constants and one function, no imports.

Gemini CLI's hooks (`~/.gemini/settings.json`, Claude Code's matcher-group shape,
timeouts in milliseconds) send `hook_event_name`, `session_id`, `transcript_path`
(the chat file), `cwd` and an ISO `timestamp`. What its events leave out, the builder
recovers (builder.py): a failing command is an ordinary AfterTool whose exit code is
only inside `tool_response.llmContent`; tool calls carry no id (paired by order within
a turn); PreCompress fires before every model call, compressed or not, so the hook
notes the chat file's size at PreCompress (SIZE_EVENTS) and the builder reads whether
the chat restarted after it. BeforeModel, AfterModel (one per streamed chunk, thinking
included) and BeforeToolSelection are neither wired nor read. The builder half:

adapter.py     what the registry hands out
builder.py     hook payloads -> Drafts; failures, pairing and compressions recovered
chats.py       reading the chat file JSONL: compressions, and the replay
wiring.py      what `ways reconcile --agent gemini` writes into settings.json
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

NAME = "gemini"

EVENT_FIELD = b"hook_event_name"
SESSION_FIELD = b"session_id"
TRANSCRIPT_FIELD = b"transcript_path"
PROJECT_ENV = "GEMINI_PROJECT_DIR"  # Gemini CLI sets it for hooks
START_EVENT = "SessionStart"
END_EVENT = "SessionEnd"
SIZE_EVENTS = ("PreCompress",)  # events at which the hook notes the session file's size

EVENT_SECTIONS = {
    "BeforeAgent": ("user_prompt",),
    "AfterAgent": ("assistant_response",),
    "BeforeTool": ("tool_call",),
    "AfterTool": ("tool_result",),
    "PreCompress": ("compaction",),
    "SessionStart": ("session_start",),
    "SessionEnd": ("session_end", "compaction"),
}


def sections_for(event: str, field: "Callable[[bytes], str | None]") -> tuple[str, ...]:
    return EVENT_SECTIONS.get(event, ())
