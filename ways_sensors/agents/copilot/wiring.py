"""What `ways reconcile --agent copilot` wires into GitHub Copilot CLI, and where.

Copilot CLI loads every `*.json` of `~/.copilot/hooks/` (`$COPILOT_HOME/hooks/`; with
--project, `<project>/.github/hooks/`): ways keeps its handlers in a file of its own
there, `ways-sensors.json`, in the flat shape of flat_hooks.py:

    {"version": 1, "hooks": {"<Event>": [{"type": "command", "bash": <the hook command>,
                                          "timeoutSec": 15}]}}

(not `~/.copilot/config.json`, whose `hooks` key Copilot CLI rewrites). PascalCase
events, whose payloads name the event; `subagentStart`, which exists only in
camelCase, with the event in argv (`--event subagentStart`). Handlers another tool put
into the file are kept; `--remove` deletes the file when nothing else is left in it
(OWN_FILE tells commands/reconcile.py so).
"""

from __future__ import annotations

import os

from .. import flat_hooks, matcher_groups

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..protocols import IsOurs

PASCAL_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
)
ARGV_EVENTS = ("subagentStart",)  # camelCase only: the payload names no event
EVENTS = PASCAL_EVENTS + ARGV_EVENTS
TIMEOUT = 15  # seconds
FILE_NAME = "ways-sensors.json"
OWN_FILE = True


def config_home(project: str | None) -> str:
    if project:
        return os.path.join(os.path.abspath(project), ".github")
    return os.environ.get("COPILOT_HOME") or os.path.join(os.path.expanduser("~"), ".copilot")


def settings_path(project: str | None) -> str:
    return os.path.join(config_home(project), "hooks", FILE_NAME)


def _entry(command: str) -> dict[str, Any]:
    return {"type": "command", "bash": command, "timeoutSec": TIMEOUT}


def wire(settings: dict[str, Any], command: str, ours: IsOurs) -> dict[str, Any]:
    entries = {event: _entry(command) for event in PASCAL_EVENTS}
    entries.update({event: _entry(f"{command} --event {event}") for event in ARGV_EVENTS})
    return flat_hooks.wire(settings, entries, matcher_groups.command_key(ours, "bash"))


def unwire(settings: dict[str, Any], ours: IsOurs) -> dict[str, Any]:
    out = flat_hooks.unwire(settings, matcher_groups.command_key(ours, "bash"))
    if set(out) <= {"version"} and "hooks" in settings:
        return {}  # only what wiring added is left: the file goes
    return out
