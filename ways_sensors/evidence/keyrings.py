"""The keyrings a dispatcher signs with: one per state root and process (one rollover
per run, keys.py), and their retirement as the dispatcher exits: every key the process
signed with is destroyed, so no file left can sign as its sessions' epochs.

The dispatcher's crew calls `retire_keys` only when this module was loaded (a chained
rule ran: crew.retire_keys looks it up in sys.modules), so a run with no chained rule
imports nothing of the evidence room."""

from __future__ import annotations

from ..state import events
from ..state.layout import Layout
from .keys import Keyring

_keyrings: dict[str, Keyring] = {}  # one per state root and process: one rollover per run


def retire_keys() -> None:
    """A dispatcher's exit: every key this process signed with is destroyed (each of its
    keyrings rolls over), so no file left can sign as the epoch its sessions' checkpoints
    were signed in. Never raises: counted in events.log instead."""
    for ring in _keyrings.values():
        try:
            ring.retire()
        except Exception as exc:
            events.log("evidence.retire_failed", error=type(exc).__name__)


def forget_destroyed() -> None:
    """Once a second in a dispatcher: no keyring keeps a key another process destroyed."""
    for ring in _keyrings.values():
        ring.forget_destroyed()


def keyring(layout: Layout) -> Keyring:
    ring = _keyrings.get(layout.root)
    if ring is None:
        ring = _keyrings[layout.root] = Keyring(layout)
    return ring
