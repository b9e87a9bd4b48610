"""After a dispatcher restart: the texts a tracker's state kept only as digests.

build.json never holds content (tracker.py's to_json): a turn whose reply may still be
recovered keeps its message id, a queued message still in the input queue its keyed
digest. Reading them back means reading the transcript again, a bounded way back.
The keyed digest (`digest`) lives here, where both the tracker and the reading back
use it, so neither module imports the other's internals (no import cycle).
"""

from __future__ import annotations

from ... import jsoncore
from ...plain import Plain, assign
from ...sha import hmac_sha256_hex, sha256_hex
from ..kit import sessionfile
from . import transcript

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, ClassVar


class Turn(Plain):
    """A turn of the main agent (tracker.py): whether its Stop came, its reply so far,
    the reply's message id and time, usage.py's running sums of the turn's API calls.
    Here, where a restart fills in the texts it kept only as message ids."""

    DEFAULTS: ClassVar[dict[str, Any]] = {"stopped": False, "text": None, "msg": None, "ts": None}
    DEFAULTS["usage"] = None
    FIELDS = tuple(DEFAULTS)
    __slots__ = FIELDS
    stopped: bool
    text: str | None
    msg: str | None
    ts: str | None
    usage: dict[str, Any] | None

    def __init__(self, **values: Any) -> None:
        assign(self, self.DEFAULTS, values)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.FIELDS}


REREAD_MAX = 32 << 20  # how far back from the offset a restart looks for lost texts


def reread(path: str | None, offset: int, pending: list[list[Any]], turns: Sequence[Turn]) -> None:
    """After a restart: the reply texts of `turns` (by message id) and the queued texts
    of `pending` (by digest), read again from the transcript's last REREAD_MAX bytes
    before the offset. A text not found is given up, logged content-free."""
    by_msg = {turn.msg: turn for turn in turns if turn.msg}
    needs = {e[0] for e in pending if e[1] is None and e[0]}
    found: dict[str, str] = {}
    if path and (by_msg or needs):
        needles = [jsoncore.dumps(m).encode() for m in by_msg] + [b'"enqueue"'] * bool(needs)
        uuids: set[str] = set()
        start = max(0, offset - REREAD_MAX)
        data = sessionfile.read_at(path, start, offset - start) or b""
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
                    found.setdefault(digest(content), content)
    for e in pending:
        if e[1] is None:
            e[1] = found.get(e[0], "")
    lost = sum(1 for turn in turns if not turn.text) + sum(1 for d in needs if d not in found)
    if lost:
        from ...state.events import log

        log("tracker.text_not_found", texts=lost)


def digest(text: str) -> str:
    """A keyed digest (the redaction key's HMAC): it is stored in build.json, where an
    unkeyed one would let a reader confirm a guessed message. Unkeyed only when the key
    cannot be had (masking then fails too, and says so)."""
    data = text.encode("utf-8", "surrogatepass")
    try:
        from ...redact import install_key

        return hmac_sha256_hex(install_key(), data)[:24]
    except Exception:
        return sha256_hex(data)[:24]
