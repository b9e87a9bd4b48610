"""Replay scaffolding: a recorded session file played back through the agent's own builder.

Each agent's replay (`ways sensors test`) turns its file's lines into the hook payloads
the agent would have sent and builds them with the Builder the dispatcher uses. What
they share is here: the recorded file is copied line by line to a scratch file as the
replay advances (so the builder reads the file as it stood when each hook ran), a
build call that names the recorded file instead of the scratch copy in the records,
and the end of a recording (what a SessionEnd releases, but no session_end record: the
file does not say the session ended).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from datetime import datetime
from types import TracebackType

from ...records import Draft
from ..protocols import SessionBuilder
from . import handed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def ts_ns(value: Any, fallback: int) -> int:
    """An ISO 8601 timestamp in nanoseconds since 1970, else `fallback`."""
    if isinstance(value, str):
        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1e9)
        except ValueError:
            pass
    return fallback


class Recording:
    """One replay's scratch copy and build call; a context manager (the copy is removed
    on exit)."""

    def __init__(self, builder: SessionBuilder, session_id: str, path: str, name: str) -> None:
        self.builder = builder
        self.session_id = session_id
        self.path = path  # the recorded file
        self._tmp = tempfile.TemporaryDirectory()
        self.scratch = os.path.join(self._tmp.name, name)
        self._out = open(self.scratch, "ab")  # noqa: SIM115 (closed in __exit__)
        self._size = 0  # bytes copied

    def __enter__(self) -> Recording:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._out.close()
        handed.forget(self.scratch)
        self._tmp.cleanup()

    def copy(self, line: bytes, objs: list[dict[str, Any]] | None = None) -> None:
        """One more line of the recorded file, where the builder will read it; `objs`:
        what the line decodes to, handed to the builder's reader so it
        is not decoded twice (kit/handed.py)."""
        self._out.write(line)
        self._out.flush()
        start, self._size = self._size, self._size + len(line)
        if objs is not None:
            handed.hand_line(self.scratch, start, self._size, objs)

    def build(self, event: str, payload: dict[str, Any], ts: int, size: int = -1) -> list[Draft]:
        """The drafts of one replayed hook event; `size` is the file's size when it ran."""
        body = {
            "session_id": self.session_id,
            "transcript_path": self.scratch,
            **payload,
            "hook_event_name": event,
        }
        drafts = self.builder.build(event, body, ts, size)
        for d in drafts:  # name the recorded file, not the scratch copy
            extra = d.data.get("extra")
            if isinstance(extra, dict) and extra.get("transcript_path") == self.scratch:
                extra["transcript_path"] = self.path
        return drafts

    def end(self, ts: int, size: int = -1) -> Iterator[Draft]:
        """The end of the recording: what a SessionEnd releases (replies never answered,
        results still parked), without the session_end record itself."""
        for d in self.build("SessionEnd", {"reason": "replay"}, ts, size):
            if d.section != "session_end":
                yield d
