"""What `ways reconcile` wires into Claude Code, and where.

One handler, `{"type": "command", "command": <the hook command>, "timeout": 15}`, on
the ten events of SPEC section 3 and the five the session issue added (PermissionRequest,
PermissionDenied, Notification, StopFailure, PostCompact), in `~/.claude/settings.json`
(or `<project>/.claude/settings.json`): in a group with matcher `*` on the events that
match tool names, in a group without a matcher on the others (they take none, or match
everything; StopFailure accepts no `*`). Our hook prints nothing, so it never answers a
permission prompt. The shape is matcher_groups.py's; a handler is ours when its `command`
is (commands/reconcile.py decides which commands are).
"""

from __future__ import annotations

import os

from .. import matcher_groups

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..protocols import IsOurs

TOOL_EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "PermissionDenied",
)
OTHER_EVENTS = (
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "PostCompact",
    "Notification",
    "StopFailure",
)
EVENTS = TOOL_EVENTS + OTHER_EVENTS
TIMEOUT = 15  # seconds; the blocking path caps itself at 10


def settings_path(project: str | None) -> str:
    if project:
        return os.path.join(os.path.abspath(project), ".claude", "settings.json")
    return os.path.join(os.path.expanduser("~"), ".claude", "settings.json")


def matcher(event: str) -> str | None:
    return "*" if event in TOOL_EVENTS else None


def _handler_is_ours(ours: IsOurs) -> matcher_groups.IsOurHandler:
    def check(handler: Any) -> bool:
        if not isinstance(handler, dict):
            return False
        cmd = handler.get("command")
        return isinstance(cmd, str) and ours(cmd)

    return check


def wire(settings: dict[str, Any], command: str, ours: IsOurs) -> dict[str, Any]:
    entry = {"type": "command", "command": command, "timeout": TIMEOUT}
    return matcher_groups.wire(settings, EVENTS, matcher, entry, _handler_is_ours(ours))


def unwire(settings: dict[str, Any], ours: IsOurs) -> dict[str, Any]:
    return matcher_groups.unwire(settings, _handler_is_ours(ours))
