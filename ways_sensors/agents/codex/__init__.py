"""The Codex CLI adapter: the builder half (agents.protocols.Adapter). Its face, what the
hook reads, is its entry in the registry (agents/__init__.py).

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

NAME = "codex"
