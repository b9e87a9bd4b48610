"""The toy agent's builder half: a counter in its state shows the state survives restarts."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ways_sensors.agents.protocols import IsOurs
from ways_sensors.records import Draft
from ways_sensors.state.events import iso_utc

from . import FACE, NAME

EVENT_SECTIONS = FACE.EVENT_SECTIONS

__all__ = [
    "NAME",
    "EVENTS",
    "WIRED_EVENTS",
    "new_builder",
    "event_of",
    "offline_drafts",
    "example",
    "find_session_file",
    "replay",
    "settings_path",
    "wire",
    "unwire",
]
EVENTS = frozenset(EVENT_SECTIONS)
WIRED_EVENTS = ("begin", "tool", "end")


class ToyBuilder:
    def __init__(self, state: str | None) -> None:
        self.calls = json.loads(state)["calls"] if state else 0

    def build(
        self, event: str, payload: dict[str, Any], ts_ns: int, transcript_size: int = -1
    ) -> list[Draft]:
        ts = iso_utc(ts_ns)
        if event == "tool":
            self.calls += 1
            return [Draft("tool_call", event, ts, {"cmd": payload.get("cmd"), "n": self.calls})]
        if event == "begin":
            return [Draft("session_start", event, ts, {})]
        if event == "end":
            return [Draft("session_end", event, ts, {"calls": self.calls})]
        return []

    def state(self) -> str:
        return json.dumps({"calls": self.calls})


@dataclass
class Stats:
    lines: int = 0
    malformed: int = 0


@dataclass
class ToyReplay:
    session_id: str
    stats: Stats = field(default_factory=Stats)

    def drafts(self) -> Iterator[Draft]:
        return iter(())


def new_builder(state: str | None = None, transcript: bool = True) -> ToyBuilder:
    return ToyBuilder(state)


def event_of(payload: dict[str, Any]) -> str | None:
    event = payload.get("event")
    return event if isinstance(event, str) else None


def offline_drafts(payload: dict[str, Any], ts_ns: int) -> list[Draft]:
    return ToyBuilder(None).build(event_of(payload) or "", payload, ts_ns)


def example(section: str) -> dict[str, Any]:
    return {"event": "tool", "conversation": "toy-fire", "cmd": "ls"}


def find_session_file(project: str, session: str | None = None) -> str | None:
    return None


def replay(path: str) -> ToyReplay:
    return ToyReplay(os.path.basename(path))


def settings_path(project: str | None) -> str:
    base = os.path.abspath(project) if project else os.path.expanduser("~")
    return os.path.join(base, ".toy", "hooks.json")


def wire(settings: dict[str, Any], command: str, ours: IsOurs) -> dict[str, Any]:
    hooks = dict(settings.get("hooks") or {})
    for event in WIRED_EVENTS:
        kept = [h for h in hooks.get(event, []) if not ours(h.get("command", ""))]
        hooks[event] = [*kept, {"command": command}]
    return {**settings, "version": 1, "hooks": hooks}


def unwire(settings: dict[str, Any], ours: IsOurs) -> dict[str, Any]:
    hooks = {}
    for event, handlers in (settings.get("hooks") or {}).items():
        kept = [h for h in handlers if not ours(h.get("command", ""))]
        if kept:
            hooks[event] = kept
    out = {k: v for k, v in settings.items() if k != "hooks"}
    if hooks:
        out["hooks"] = hooks
    return out
