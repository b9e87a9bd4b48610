"""A recorded Gemini CLI session (its chat file) played back as the hook would have seen it.

chats.Replayer turns the chat file's lines into the hook payloads Gemini CLI would have
sent (SessionStart, BeforeAgent, BeforeTool, AfterTool, AfterAgent, and PreCompress
for each compression it finds), and those go through the same Builder the dispatcher
uses. The chat file is copied line by line to a scratch file as the replay advances,
so the builder decides compressions from the file as it stood.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from ...records import Draft
from ..kit.replaying import Recording, ts_ns
from ..kit.sessionfile import ReadStats
from . import chats
from .builder import Builder


class Replay:
    """Hook payloads from a chat file, and the drafts the builder makes of them."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.stats = ReadStats()
        header = chats._header(path)
        sid = header.get("sessionId")
        self.session_id = sid if isinstance(sid, str) else os.path.basename(path).rsplit(".", 1)[0]

    def drafts(self) -> Iterator[Draft]:
        replayer = chats.Replayer()
        with Recording(Builder(), self.session_id, self.path, "chat.jsonl") as rec:
            ts, size = 0, 0
            for line, objs in chats.iter_lines(self.path, self.stats):
                for obj in objs:
                    for event, payload, at in replayer.payloads(obj, size):
                        ts = ts_ns(payload.get("timestamp"), ts)
                        yield from rec.build(event, payload, ts, at)
                rec.copy(line)
                size += len(line)
            for event, payload, at in replayer.end_turn(size):
                ts = ts_ns(payload.get("timestamp"), ts)
                yield from rec.build(event, payload, ts, at)
            yield from rec.end(ts, size)
