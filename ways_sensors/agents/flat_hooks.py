"""Wiring a hook into the "flat" hooks-file shape of Cursor and Copilot CLI.

    {"version": 1, "hooks": {"<event>": [<handler>, ...], ...}}

(Cursor's `~/.cursor/hooks.json`, `{"command", ...}` handlers; Copilot CLI's
`~/.copilot/hooks/*.json`, `{"type": "command", "bash", ...}` handlers). `wire` puts
one handler of ours on every event: in place of one of ours (an older form is
replaced, a duplicate dropped), else appended; every other handler, event and key
keeps its place, and `version` is set when the file had none. `unwire` removes our
handlers, and only the event lists and `hooks` key that became empty through that.
Neither mutates its argument.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    IsOurHandler = Callable[[Any], bool]


def wire(
    settings: dict[str, Any],
    entries: Mapping[str, dict[str, Any]],
    ours: IsOurHandler,
) -> dict[str, Any]:
    """Settings with `entries[event]` on each event."""
    out = dict(settings)
    out.setdefault("version", 1)
    hooks = out.get("hooks")
    hooks = dict(hooks) if isinstance(hooks, dict) else {}
    for event, entry in entries.items():
        handlers = hooks.get(event)
        handlers = list(handlers) if isinstance(handlers, list) else []
        found = False
        kept = []
        for h in handlers:
            if ours(h):
                if found:
                    continue  # a duplicate of ours: keep one
                found = True
                h = {**h, **entry}
            kept.append(h)
        if not found:
            kept.append(dict(entry))
        hooks[event] = kept
    out["hooks"] = hooks
    return out


def unwire(settings: dict[str, Any], ours: IsOurHandler) -> dict[str, Any]:
    """Settings without our handlers, nor the containers that emptied because of it."""
    out = dict(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    hooks = dict(hooks)
    for event in list(hooks):
        handlers = hooks[event]
        if not isinstance(handlers, list):
            continue
        kept = [h for h in handlers if not ours(h)]
        if len(kept) == len(handlers):
            continue
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if settings.get("hooks") and not hooks:
        del out["hooks"]
    else:
        out["hooks"] = hooks
    return out
