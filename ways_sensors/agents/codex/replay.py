"""A recorded Codex session (its rollout) played back as the hook would have seen it.

rollout.Replayer turns each rollout line into the hook payloads Codex would have sent
(SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, Pre/PostCompact), and
those go through the same Builder the dispatcher uses. The rollout is copied line by
line to a scratch file as the replay advances, so the builder finds each command's
outcome exactly where it would have live.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from ...records import Draft
from ..kit.replaying import Recording, ts_ns
from ..kit.sessionfile import ReadStats
from . import rollout
from .builder import Builder


def session_of(path: str) -> str:
    """The session id: its session_meta line's, else the file name's tail
    (`rollout-2026-11-29T22-15-47-<session id>.jsonl`)."""
    meta = rollout.session_meta(path)
    sid = meta.get("id")
    if isinstance(sid, str) and sid:
        return sid
    name = os.path.basename(path).rsplit(".", 1)[0]
    parts = name.split("-")
    return "-".join(parts[-5:]) if len(parts) >= 10 else name


class Replay:
    """Hook payloads from a rollout, and the drafts the builder makes of them."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.stats = ReadStats()
        self.session_id = session_of(path)

    def drafts(self) -> Iterator[Draft]:
        replayer = rollout.Replayer()
        with Recording(Builder(), self.session_id, self.path, "rollout.jsonl") as rec:
            ts = 0
            for line, objs in rollout.iter_lines(self.path, self.stats):
                rec.copy(line)
                for obj in objs:
                    ts = ts_ns(obj.get("timestamp"), ts)
                    for event, payload in replayer.payloads(obj):
                        yield from rec.build(event, payload, ts)
            yield from rec.end(ts)  # results still parked
