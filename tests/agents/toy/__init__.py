"""A toy agent, shaped unlike Claude Code, to prove the registry seam: its face.

Its payloads are `{"event": "begin" | "tool" | "end", "conversation": "<id>", "cmd":
"..."}`; its settings file is `<home>/.toy/hooks.json`, `{"version": 1, "hooks":
{"<event>": [{"command": "..."}]}}` (a flat shape, like Cursor's). Registered only in
the processes tests start through tests/agents/with_toy.py: one registry line.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

NAME = "toy"
EVENT_FIELD = b"event"
SESSION_FIELD = b"conversation"
TRANSCRIPT_FIELD = None
PROJECT_ENV = "TOY_PROJECT_DIR"
START_EVENT = "begin"
END_EVENT = "end"
EVENT_SECTIONS = {
    "begin": ("session_start",),
    "tool": ("tool_call",),
    "end": ("session_end",),
}


def sections_for(event: str, field: "Callable[[bytes], str | None]") -> tuple[str, ...]:
    return EVENT_SECTIONS.get(event, ())
