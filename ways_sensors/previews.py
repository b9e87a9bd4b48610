"""Which new rules still wait for their preview: `<state>/previews.json` (layout.py).

A rule created by `ways settings set`, by `ways sensors copy` (or the TUI later) is
written `enabled: false` and recorded here as unseen; `ways sensors test` marks it
seen; enabling an unseen rule is refused. Hand-written rules are never recorded, so
they are never gated.
    {"<sensor>/<rule>" (layout.rule_label): {"created": <unix time>,
                                              "seen": <unix time> | null}}
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from . import roots
from .files import update_json_locked
from .layout import Layout, rule_label, split_rule_label


def _update(change: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    layout = Layout()
    roots.makedirs_private(layout.root)
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


def waiting(rule_id: str) -> bool:
    """True when the rule was created by a command and its preview was never shown."""
    try:
        with open(Layout().previews()) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return False
    entry = data.get(rule_id) if isinstance(data, dict) else None
    return isinstance(entry, dict) and entry.get("seen") is None


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
