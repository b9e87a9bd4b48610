"""After a dispatcher restart: the texts a tracker's state kept only as digests.

build.json never holds content (tracker.py's to_json): a turn whose reply may still be
recovered keeps its message id, a queued message still in the input queue its keyed
digest. Reading them back means reading the transcript again, a bounded way back.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..kit import sessionfile
from . import transcript

if TYPE_CHECKING:
    from .tracker import Tracker, Turn

REREAD_MAX = 32 << 20  # how far back from the offset a restart looks for lost texts


def reread(t: Tracker, turns: list[Turn]) -> None:
    """After a restart: the reply texts of `turns` (by message id) and the queued texts
    of `t.pending` (by digest), read again from the transcript's last REREAD_MAX bytes
    before the offset. A text not found is given up, logged content-free."""
    from .tracker import _digest  # tracker.py imports this module only when it reads

    by_msg = {turn.msg: turn for turn in turns if turn.msg}
    needs = {e[0] for e in t.pending if e[1] is None and e[0]}
    found: dict[str, str] = {}
    if t.transcript and (by_msg or needs):
        needles = [json.dumps(m).encode() for m in by_msg] + [b'"enqueue"'] * bool(needs)
        uuids: set[str] = set()
        start = max(0, t.offset - REREAD_MAX)
        data = sessionfile.read_at(t.transcript, start, t.offset - start) or b""
        for line in data.split(b"\n")[1 if start else 0 :]:
            if not any(n in line for n in needles):
                continue
            for obj in sessionfile.decode_line(line):
                uid = obj.get("uuid")
                if obj.get("isSidechain") or (isinstance(uid, str) and uid in uuids):
                    continue  # as sync skips them: a resume repeats lines
                if isinstance(uid, str):
                    uuids.add(uid)
                msg = _m if isinstance(_m := obj.get("message"), dict) else {}
                mid = msg.get("id")
                turn = by_msg.get(mid) if obj.get("type") == "assistant" and mid else None
                if turn is not None:
                    text = transcript.message_text(msg.get("content"))
                    if text:
                        turn.text = turn.text + "\n" + text if turn.text else text
                content = obj.get("content")
                if obj.get("operation") == "enqueue" and isinstance(content, str) and needs:
                    found.setdefault(_digest(content), content)
    for e in t.pending:
        if e[1] is None:
            e[1] = found.get(e[0], "")
    lost = sum(1 for turn in turns if not turn.text) + sum(1 for d in needs if d not in found)
    if lost:
        from ...events import log

        log("tracker.text_not_found", texts=lost)
