"""Locks of the managed sensor layer: what no user or project file, command or tab edit
can change.

A managed sensor file (`/etc/xdg/agent-ways/sensors/<name>.yaml`, or under a folder of
$XDG_CONFIG_DIRS; roots.managed_roots) may mark the sensor `locked: true`, or single
rules. Every file applied after it (user, project, a later managed folder) is then
read without what it says about the locked part, and each dropped part is a lint
warning naming the managed file:

* a locked sensor: the whole file is ignored;
* a locked rule: the file's `rules.<rule>` is ignored, and so is the sensor's top-level
  `enabled` (turning the sensor off would turn the rule off with it).

`locked` in a user or project file means nothing (a warning says so): only the managed
layer, which users cannot write, locks. The writers refuse before writing (refusal()):
`ways settings set|unset`, `ways sensors copy|rename|delete` and the tab's editor.
"""

from __future__ import annotations

from typing import Any

Held = dict[str | None, str]  # rule name (None: the whole sensor) -> the managed file


def record(held: Held, raw: Any, path: str) -> None:
    """Add what a managed file locks (its own `locked: true` marks) to `held`."""
    if not isinstance(raw, dict):
        return
    if raw.get("locked") is True:
        held.setdefault(None, path)
    rules = raw.get("rules")
    for name, rule in rules.items() if isinstance(rules, dict) else ():
        if isinstance(rule, dict) and rule.get("locked") is True:
            held.setdefault(name, path)


def strip(raw: Any, held: Held) -> tuple[Any, list[tuple[list[str | int], str]]]:
    """`raw` (a later layer's file) without what `held` locks, and each dropped part:
    (its path in the file, why)."""
    if not isinstance(raw, dict) or not held:
        return raw, []
    if None in held:
        return {}, [([], f"the sensor is locked by {held[None]}: this file is ignored")]
    out = dict(raw)
    dropped: list[tuple[list[str | int], str]] = []
    rules = raw.get("rules")
    if isinstance(rules, dict):
        for name in rules:
            if name in held:
                why = (
                    f"rule {name} is locked by {held[name]}: this file's changes to it are ignored"
                )
                dropped.append((["rules", name], why))
        out["rules"] = {k: v for k, v in rules.items() if k not in held}
    if "enabled" in raw:
        locked_by = next(iter(held.values()))
        why = f"the sensor holds rules locked by {locked_by}: it cannot be turned off here"
        dropped.append((["enabled"], why))
        del out["enabled"]
    return out, dropped


def unused(raw: Any) -> list[list[str | int]]:
    """Where a user or project file says `locked`, which only the managed layer honours."""
    if not isinstance(raw, dict):
        return []
    found: list[list[str | int]] = [["locked"]] if "locked" in raw else []
    rules = raw.get("rules")
    for name, rule in rules.items() if isinstance(rules, dict) else ():
        if isinstance(rule, dict) and "locked" in rule:
            found.append(["rules", name, "locked"])
    return found


def refusal(
    locks: dict[str, Held], sensor: str, rule: str | None = None, field: str | None = None
) -> str | None:
    """Why a write is refused, naming the managed file; None when nothing locks it. The
    write is to `sensor`'s rule `rule`, or to its top-level `field`, or (both None) to
    the sensor as a whole: a copy over it, a rename, a delete."""
    held = locks.get(sensor) or {}
    if None in held:
        return f"sensor {sensor} is locked by the managed file {held[None]}"
    if rule is not None:
        if rule in held:
            return f"rule {sensor}/{rule} is locked by the managed file {held[rule]}"
        return None
    if held and field in (None, "enabled", "locked", "rules"):
        path = next(iter(held.values()))
        return f"sensor {sensor} holds rules locked by the managed file {path}"
    return None


def refuse(
    locks: dict[str, Held], sensor: str, rule: str | None = None, field: str | None = None
) -> None:
    """Raise InvalidError (exit 3) when refusal() refuses the write."""
    why = refusal(locks, sensor, rule, field)
    if why:
        from ..errors import InvalidError

        raise InvalidError(why, hint="the administrator's managed layer decides it")
