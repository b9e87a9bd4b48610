"""Which new rules still wait for their preview: `<state>/previews.json` (layout.py).

A rule created by `ways settings set`, by `ways sensors copy` (or the TUI later) is
written `enabled: false` and recorded here as unseen; `ways sensors test` marks it
seen. Hand-written rules are never recorded, so they are never gated.

The gate is `refuse_enabling`, the one check every writer of sensor files calls with
the merged sensor as the hook would load it before and after its write: a write that
switches an unseen rule on is refused (InvalidError, exit 3, one line naming `ways
sensors test`), whichever key it touched. "On" is read at both levels: the rule's own
`enabled` (default true, so unsetting it or replacing the whole rule without it
switches it on) and the rule in effect (its sensor's `enabled` too, so switching the
sensor on under a rule whose own flag was turned on by hand is refused as well). A
rule already on before the write (a hand edit) is left to its author.
    {"<sensor>/<rule>" (layout.rule_label): {"created": <unix time>,
                                              "seen": <unix time> | null}}
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import InvalidError
from . import secure
from .files import update_json_locked
from .layout import Layout, read_state, rule_label, split_rule_label


def _update(change: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    layout = Layout()
    secure.ensure_private_dir(layout.root, layout.root)
    return update_json_locked(layout.previews(), change)


def created(rule_id: str) -> None:
    def change(d: dict[str, Any]) -> bool:
        d[rule_id] = {"created": time.time(), "seen": None}
        return True

    _update(change)


def seen(rule_id: str) -> None:
    def change(d: dict[str, Any]) -> bool:
        entry = d.get(rule_id)
        if isinstance(entry, dict) and entry.get("seen") is None:
            d[rule_id]["seen"] = time.time()
            return True
        return False

    _update(change)


def _unseen() -> set[str]:
    """The rule ids created by a command whose preview was never shown."""
    data = read_state(Layout().previews())  # None: missing, a link, not JSON
    if not isinstance(data, dict):
        return set()
    return {k for k, v in data.items() if isinstance(v, dict) and v.get("seen") is None}


def waiting(rule_id: str) -> bool:
    """True when the rule was created by a command and its preview was never shown."""
    return rule_id in _unseen()


def renamed(old_sensor: str, new_sensor: str) -> None:
    def change(d: dict[str, Any]) -> bool:
        moved = False
        for k in list(d):
            s, r = split_rule_label(k)
            if s == old_sensor:
                d[rule_label(new_sensor, r)] = d.pop(k)
                moved = True
        return moved

    _update(change)


def _switches(sensor: Any, rule: str) -> tuple[bool, bool]:
    """(the rule's own flag, the rule in effect) in a merged sensor mapping; a missing
    field takes the spec's default (true), a missing rule is off."""
    if not isinstance(sensor, dict):
        return False, False
    rules = sensor.get("rules")
    raw = rules.get(rule) if isinstance(rules, dict) else None
    if not isinstance(raw, dict):
        return False, False
    own = raw.get("enabled", True) is True
    return own, own and sensor.get("enabled", True) is True


def refuse_enabling(sensor: str, before: Any, after: Any, new: Iterable[str] = ()) -> None:
    """Raise InvalidError when `after` switches on a rule of `sensor` whose preview was
    never seen and that was off in `before` (None: the sensor did not exist). `new`
    names rules the caller is creating now, gated before previews.json records them."""
    rules = after.get("rules") if isinstance(after, dict) else None
    gated = _unseen() | {rule_label(sensor, name) for name in new}
    unseen = []
    for name in sorted(rules) if isinstance(rules, dict) else []:
        if rule_label(sensor, name) not in gated:
            continue
        was, now = _switches(before, name), _switches(after, name)
        if (now[0] and not was[0]) or (now[1] and not was[1]):
            unseen.append(rule_label(sensor, name))
    if unseen:
        more = f" (and {len(unseen) - 1} more)" if len(unseen) > 1 else ""
        raise InvalidError(
            f"{unseen[0]}{more} was created by a command and its preview was never seen",
            hint=f"run `ways sensors test {unseen[0]}` first",
        )
