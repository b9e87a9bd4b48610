"""Wiring a hook into the "matcher groups" settings shape, shared by several agents.

Claude Code's `settings.json` (and, in the same shape, Gemini CLI's `settings.json` and
Codex's `hooks.json`, used by agents/gemini/ and agents/codex/) hold hooks as

    {"hooks": {"<Event>": [{"matcher": "<pattern>"?, "hooks": [<handler>, ...]}, ...]}}

`wire` puts one handler of ours on every event: in place where one of ours already is
(an older form is replaced, so an upgrade or a moved environment repairs the path; a
duplicate of ours is dropped), else in a new group of its own. Every other handler,
group, event and key keeps its place and order. `unwire` removes our handlers and only
the groups, event lists and `hooks` key that became empty through that. Neither
mutates its argument.

Both refuse (ShapeError) settings whose `hooks` is present but not an object, or holds
an event whose value is not a list: rewriting those would drop what the user wrote,
and the agent would not run them anyway. A group that is not an object, or whose
`hooks` is not a list, is kept as it is, untouched.
"""

from __future__ import annotations

from .. import jsoncore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    IsOurHandler = Callable[[Any], bool]

# a handler as the settings hold it -> whether it is one of ours


class ShapeError(ValueError):
    """The settings' hooks are not in the matcher-groups shape; the message says where."""


def check(settings: dict[str, Any]) -> None:
    """Raise ShapeError unless `settings` is in the shape wire and unwire edit."""
    if "hooks" not in settings:
        return
    hooks = settings["hooks"]
    if not isinstance(hooks, dict):
        raise ShapeError('has "hooks" that is not an object')
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            name = jsoncore.dumps(event, ensure_ascii=True)[:80]
            raise ShapeError(f'has "hooks" > {name} that is not a list')


def wire(
    settings: dict[str, Any],
    events: Iterable[str],
    matcher: Callable[[str], str | None],
    entry: dict[str, Any],
    ours: IsOurHandler,
) -> dict[str, Any]:
    """Settings with `entry` on every event; `matcher(event)` is a new group's matcher
    (None: a group without one)."""
    check(settings)
    out = dict(settings)
    hooks = dict(out.get("hooks") or {})
    for event in events:
        groups = list(hooks.get(event) or [])
        found = False
        new_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                new_groups.append(group)
                continue
            handlers = []
            for h in group["hooks"]:
                if ours(h):
                    if found:
                        continue  # a duplicate of ours: keep one
                    found = True
                    h = {**h, **entry}
                handlers.append(h)
            if handlers or not group["hooks"]:
                new_groups.append({**group, "hooks": handlers})
        if not found:
            pattern = matcher(event)
            ours_group: dict[str, Any] = {} if pattern is None else {"matcher": pattern}
            ours_group["hooks"] = [entry]
            new_groups.append(ours_group)
        hooks[event] = new_groups
    out["hooks"] = hooks
    return out


def unwire(settings: dict[str, Any], ours: IsOurHandler) -> dict[str, Any]:
    """Settings without our handlers, and without the containers that emptied because of it."""
    check(settings)
    out = dict(settings)
    if "hooks" not in out:
        return out
    hooks = dict(out["hooks"])
    for event in list(hooks):
        groups = hooks[event]
        new_groups = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                kept = [h for h in group["hooks"] if not ours(h)]
                if len(kept) != len(group["hooks"]) and not kept:
                    continue  # emptied by us
                if len(kept) != len(group["hooks"]):
                    group = {**group, "hooks": kept}
            new_groups.append(group)
        if groups and not new_groups:
            del hooks[event]
        else:
            hooks[event] = new_groups
    if settings.get("hooks") and not hooks:
        del out["hooks"]
    else:
        out["hooks"] = hooks
    return out


def command_key(ours: Callable[[str], bool], key: str = "command") -> IsOurHandler:
    """A handler is ours when its `key` (the command line) is one of ours."""

    def check(handler: Any) -> bool:
        if not isinstance(handler, dict):
            return False
        cmd = handler.get(key)
        return isinstance(cmd, str) and ours(cmd)

    return check
