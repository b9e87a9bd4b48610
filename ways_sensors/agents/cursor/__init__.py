"""The Cursor adapter: the builder half (agents.protocols.Adapter). Its face, what the
hook reads, is its entry in the registry (agents/__init__.py).

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

NAME = "cursor"
