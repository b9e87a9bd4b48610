"""What `ways reconcile --agent codex` wires into Codex CLI, and where.

`$CODEX_HOME/hooks.json` (default `~/.codex/hooks.json`; `<project>/.codex/hooks.json`
with --project) holds hooks in Claude Code's shape (matcher_groups.py):
`{"hooks": {"<Event>": [{"hooks": [{"type": "command", "command", "timeout"}]}]}}`,
the timeout in seconds (Codex clamps SessionEnd's to 3). One handler of ours, in a
group without a matcher (every tool, every source), on each event of WIRED.

Codex runs a hook only once its hash is trusted (the TUI's `/hooks` review, persisted
in config.toml): until then it skips it silently. `ways reconcile` says so (NOTE).
"""

from __future__ import annotations

import os

from .. import matcher_groups
from .rollout import codex_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..protocols import IsOurs

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)
TIMEOUT = 15  # seconds
NOTE = (
    "Codex runs a new hook only after you trust it: start `codex`, open /hooks and trust"
    " `ways hook sensors` (until then Codex skips it silently)"
)


def config_home(project: str | None) -> str:
    if project:
        return os.path.join(os.path.abspath(project), ".codex")
    return codex_home()


def settings_path(project: str | None) -> str:
    return os.path.join(config_home(project), "hooks.json")


def wire(settings: dict[str, Any], command: str, ours: IsOurs) -> dict[str, Any]:
    entry = {"type": "command", "command": command, "timeout": TIMEOUT}
    return matcher_groups.wire(
        settings, EVENTS, lambda _: None, entry, matcher_groups.command_key(ours)
    )


def unwire(settings: dict[str, Any], ours: IsOurs) -> dict[str, Any]:
    return matcher_groups.unwire(settings, matcher_groups.command_key(ours))
