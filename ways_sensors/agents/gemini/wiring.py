"""What `ways reconcile --agent gemini` wires into Gemini CLI, and where.

`~/.gemini/settings.json` (or `<project>/.gemini/settings.json`) holds hooks in
Claude Code's matcher-group shape (matcher_groups.py), each handler
`{"name", "type": "command", "command", "timeout"}` with the timeout in MILLISECONDS.
One handler of ours, in a group with matcher `*`, on each event of EVENTS: not on
BeforeModel, AfterModel (one run per streamed chunk) or BeforeToolSelection, whose
payloads hold no section, nor Notification. Every other key of settings.json is kept.
"""

from __future__ import annotations

import os

from .. import matcher_groups
from .chats import gemini_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..protocols import IsOurs

EVENTS = (
    "SessionStart",
    "BeforeAgent",
    "BeforeTool",
    "AfterTool",
    "AfterAgent",
    "PreCompress",
    "SessionEnd",
)
TIMEOUT_MS = 15000
HOOK_NAME = "ways-sensors"


def config_home(project: str | None) -> str:
    if project:
        return os.path.join(os.path.abspath(project), ".gemini")
    return gemini_home()


def settings_path(project: str | None) -> str:
    return os.path.join(config_home(project), "settings.json")


def wire(settings: dict[str, Any], command: str, ours: IsOurs) -> dict[str, Any]:
    entry = {"name": HOOK_NAME, "type": "command", "command": command, "timeout": TIMEOUT_MS}
    return matcher_groups.wire(
        settings, EVENTS, lambda _: "*", entry, matcher_groups.command_key(ours)
    )


def unwire(settings: dict[str, Any], ours: IsOurs) -> dict[str, Any]:
    return matcher_groups.unwire(settings, matcher_groups.command_key(ours))
