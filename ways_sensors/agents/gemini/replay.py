"""A recorded Gemini CLI session (its chat file) played back as the hook would have seen it.

chats.Replayer turns the chat file's lines into the hook payloads Gemini CLI would have
sent (SessionStart, BeforeAgent, BeforeTool, AfterTool, AfterAgent, and PreCompress
for each compression it finds), and those go through the same Builder the dispatcher
uses. The chat file is copied line by line to a scratch file as the replay advances,
so the builder decides compressions from the file as it stood.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from ...records import Draft
from ..kit.sessionfile import ReadStats
from . import chats
from .builder import Builder


def _ns(value: Any, fallback: int) -> int:
    if isinstance(value, str):
        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1e9)
        except ValueError:
            pass
    return fallback


class Replay:
    """Hook payloads from a chat file, and the drafts the builder makes of them."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.stats = ReadStats()
        header = chats._header(path)
        sid = header.get("sessionId")
        self.session_id = sid if isinstance(sid, str) else os.path.basename(path).rsplit(".", 1)[0]

    def drafts(self) -> Iterator[Draft]:
        with tempfile.TemporaryDirectory() as tmp:
            scratch = os.path.join(tmp, "chat.jsonl")
            builder = Builder()
            replayer = chats.Replayer()
            ts = 0

            def build(event: str, payload: dict[str, Any], size: int) -> list[Draft]:
                nonlocal ts
                ts = _ns(payload.get("timestamp"), ts)
                body = {"session_id": self.session_id, "transcript_path": scratch, **payload}
                drafts = builder.build(event, {**body, "hook_event_name": event}, ts, size)
                for d in drafts:  # name the recorded chat file, not the scratch copy
                    extra = d.data.get("extra")
                    if isinstance(extra, dict) and extra.get("transcript_path") == scratch:
                        extra["transcript_path"] = self.path
                return drafts

            size = 0
            with open(scratch, "ab") as out:
                for line, objs in chats.iter_lines(self.path, self.stats):
                    for obj in objs:
                        for event, payload, at in replayer.payloads(obj, size):
                            yield from build(event, payload, at)
                    out.write(line)
                    out.flush()
                    size += len(line)
                for event, payload, at in replayer.end_turn(size):
                    yield from build(event, payload, at)
                for d in build("SessionEnd", {"reason": "replay"}, size):
                    if d.section != "session_end":
                        yield d
