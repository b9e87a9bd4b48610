"""What `ways reconcile --agent cursor` wires into Cursor, and where.

`~/.cursor/hooks.json` (or `<project>/.cursor/hooks.json`), in the flat shape of
flat_hooks.py: `{"version": 1, "hooks": {"<event>": [{"command": ...}]}}`. One handler
of ours, `{"command": <the hook command>}`, on each event of EVENTS: the generic tool
events (which carry a tool-call id) rather than the specific shell, MCP and file ones,
and never `afterAgentThought` (thinking). No `timeout`: Cursor's docs show it in both
seconds and milliseconds, and the hook never runs long.
"""

from __future__ import annotations

import os

from .. import flat_hooks, matcher_groups

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..protocols import IsOurs

EVENTS = (
    "sessionStart",
    "beforeSubmitPrompt",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "afterAgentResponse",
    "subagentStart",
    "subagentStop",
    "preCompact",
    "sessionEnd",
)


def config_home(project: str | None) -> str:
    base = os.path.abspath(project) if project else os.path.expanduser("~")
    return os.path.join(base, ".cursor")


def settings_path(project: str | None) -> str:
    return os.path.join(config_home(project), "hooks.json")


def wire(settings: dict[str, Any], command: str, ours: IsOurs) -> dict[str, Any]:
    entries = {event: {"command": command} for event in EVENTS}
    return flat_hooks.wire(settings, entries, matcher_groups.command_key(ours))


def unwire(settings: dict[str, Any], ours: IsOurs) -> dict[str, Any]:
    return flat_hooks.unwire(settings, matcher_groups.command_key(ours))
