"""The GitHub Copilot CLI adapter: the builder half (agents.protocols.Adapter). Its face,
what the hook reads, is its entry in the registry (agents/__init__.py).

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

NAME = "copilot"
