"""A toy agent, shaped unlike Claude Code, to prove the registry seam: its face, and its
adapter package (this package; the builder half is adapter.py).

Its payloads are `{"event": "begin" | "tool" | "end", "conversation": "<id>", "cmd":
"..."}`; its settings file is `<home>/.toy/hooks.json`, `{"version": 1, "hooks":
{"<event>": [{"command": "..."}]}}` (a flat shape, like Cursor's). Registered only in
the processes tests start through tests/agents/with_toy.py: one registry line,
`agents.register(FACE)`, where a built-in agent has its entry in agents.AGENTS.
"""

from ways_sensors.agents import AgentFace

NAME = "toy"

FACE = AgentFace(
    NAME,
    package="tests.agents.toy",
    event_field=b"event",
    session_field=b"conversation",
    transcript_field=None,
    project_env="TOY_PROJECT_DIR",
    start_event="begin",
    end_event="end",
    event_sections={
        "begin": ("session_start",),
        "tool": ("tool_call",),
        "end": ("session_end",),
    },
)
