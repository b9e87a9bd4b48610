"""A recorded Codex session (its rollout) played back as the hook would have seen it.

rollout.Replayer turns each rollout line into the hook payloads Codex would have sent
(SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, Pre/PostCompact), and
those go through the same Builder the dispatcher uses. The rollout is copied line by
line to a scratch file as the replay advances, so the builder finds each command's
outcome exactly where it would have live.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from ...records import Draft
from ..kit.sessionfile import ReadStats
from . import rollout
from .builder import Builder


def _ts(obj: dict[str, Any], fallback: int) -> int:
    t = obj.get("timestamp")
    if isinstance(t, str):
        try:
            return int(datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp() * 1e9)
        except ValueError:
            pass
    return fallback


def session_of(path: str) -> str:
    """The session id: its session_meta line's, else the file name's tail
    (`rollout-2026-11-29T22-15-47-<session id>.jsonl`)."""
    meta = rollout.session_meta(path)
    if isinstance(meta.get("id"), str) and meta["id"]:
        return meta["id"]
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
        with tempfile.TemporaryDirectory() as tmp:
            scratch = os.path.join(tmp, "rollout.jsonl")
            builder = Builder()
            replayer = rollout.Replayer()

            def build(event: str, payload: dict[str, Any], ts: int) -> list[Draft]:
                body = {"session_id": self.session_id, "transcript_path": scratch, **payload}
                drafts = builder.build(event, {**body, "hook_event_name": event}, ts)
                for d in drafts:  # name the recorded rollout, not the scratch copy
                    extra = d.data.get("extra")
                    if isinstance(extra, dict) and extra.get("transcript_path") == scratch:
                        extra["transcript_path"] = self.path
                return drafts

            ts = 0
            with open(scratch, "ab") as out:
                for line, objs in rollout.iter_lines(self.path, self.stats):
                    out.write(line)
                    out.flush()
                    for obj in objs:
                        ts = _ts(obj, ts)
                        for event, payload in replayer.payloads(obj):
                            yield from build(event, payload, ts)
                # the end of the recording: results still parked, but no session_end record
                for d in build("SessionEnd", {"reason": "replay"}, ts):
                    if d.section != "session_end":
                        yield d
