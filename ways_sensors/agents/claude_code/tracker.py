"""What a Claude Code session's records need beyond one payload: the transcript, followed.

Two sections come from the transcript, through the per-session `Tracker` (persisted by
the dispatcher as JSON, so "exported once" survives restarts):

* `queued_message`: each message typed while the agent worked and absorbed into the
  running turn: a `queue-operation` enqueue later `remove`d, or a `queued_command`
  attachment (one matching an absorbed enqueue is not exported again). Every prompt
  passes through the queue; one that is `dequeue`d became a turn of its own and is the
  user_prompt record. Task notifications are not typed; `popAll` was pulled back.
* `assistant_response` for replies that never reached a `Stop` (interrupted): the
  tracker splits the transcript into turns at each prompt-like user line; a `Stop`
  marks the newest turn as answered (its text comes from the payload's
  `last_assistant_message`, because the transcript may lag), and older turns that were
  never answered are exported from the transcript, at that `Stop` or at `SessionEnd`.
  Thinking blocks are never read.

The builder (builder.py) decides when to read; this module reads and remembers.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from ...records import Draft
from . import transcript

MAX_SEEN = 4096
MakeDraft = Callable[..., Draft]  # builder.py's draft(section, data, **overrides)


@dataclass
class Turn:
    stopped: bool = False
    text: str | None = None
    msg: str | None = None
    ts: str | None = None


@dataclass
class Tracker:
    """What one session's records depend on beyond a single payload; JSON-persisted."""

    transcript: str | None = None
    offset: int = 0
    started: bool = False
    turns: list[Turn] = field(default_factory=list)
    pending_stops: int = 0
    queued: list[str] = field(default_factory=list)  # digests of exported, unmatched enqueues
    pending: list[list] = field(default_factory=list)  # [digest, text, ts] still in the queue
    seen: list[str] = field(default_factory=list)  # recent line uuids (resumes repeat lines)
    agents: list[str] = field(default_factory=list)  # agent ids seen at SubagentStart
    compact_trigger: str | None = None

    def __post_init__(self) -> None:
        self._seen = set(self.seen)  # membership; the list keeps the order

    def to_json(self) -> str:
        """The state a restart needs, never content (build.json is at rest for the
        session's life): a turn keeps its message id and time, and `held` when a reply
        may still be recovered from it; a queued message its keyed digest and time.
        from_json reads those texts back from the transcript."""
        d = asdict(self)
        for t, turn in zip(d["turns"], self.turns, strict=True):
            t["text"] = None
            t["held"] = bool(turn.text) and not turn.stopped
        d["pending"] = [[dig, None if text else "", ts] for dig, text, ts in self.pending]
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> Tracker:
        d = json.loads(text)
        held = [bool(t.pop("held", False)) for t in d.get("turns", [])]
        d["turns"] = [Turn(**t) for t in d.get("turns", [])]
        tracker = cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})
        want = [t for t, h in zip(tracker.turns, held, strict=True) if h and t.text is None]
        if want or any(e[1] is None for e in tracker.pending):
            _reread(tracker, want)
        return tracker

    # --- reading the transcript -------------------------------------------------------

    def fast_forward(self, path: str, size: int) -> None:
        """A new tracker at a session start: what the transcript held when the hook ran
        (`size` bytes; -1: all of it) was handled by the process (or dispatcher) before
        us, so start reading there."""
        self.transcript = path
        try:
            with open(path, "rb") as f:
                data = f.read(size) if size >= 0 else f.read()
        except OSError:
            return
        self.offset = data.rfind(b"\n") + 1

    def sync(self, path: str, draft: MakeDraft) -> list[Draft]:
        """Read the transcript's new complete lines; return the queued messages found."""
        if self.transcript != path:
            self.transcript, self.offset = path, 0
        objs, self.offset = transcript.read_from(path, self.offset)
        out: list[Draft] = []
        last_ts = None
        for obj in objs:
            ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else last_ts
            last_ts = ts
            uid = obj.get("uuid")
            if isinstance(uid, str):
                if uid in self._seen:
                    continue
                self.seen.append(uid)
                self._seen.add(uid)
                if len(self.seen) > 2 * MAX_SEEN:
                    del self.seen[: len(self.seen) - MAX_SEEN]
                    self._seen = set(self.seen)
            if obj.get("isSidechain"):
                continue
            out.extend(self._line(obj, ts, draft))
        return out

    def recovered(self, turn: Turn, draft: MakeDraft) -> Draft:
        """The reply of a turn no Stop answered, from the transcript, marked interrupted."""
        d = draft(
            "assistant_response",
            {"text": turn.text, "interrupted": True},
            agent_id=None,
            agent_type="main",
        )
        if turn.ts:
            d.timestamp = turn.ts
        turn.stopped = True
        return d

    # --- one transcript line ------------------------------------------------------------

    def _queued(self, text: str, ts: str | None, draft: MakeDraft, how: str) -> Draft:
        d = draft("queued_message", {"text": text, "via": how}, agent_id=None, agent_type="main")
        if ts:
            d.timestamp = ts
        return d

    def _queue_operation(
        self, obj: dict[str, Any], ts: str | None, draft: MakeDraft
    ) -> list[Draft]:
        """The input queue's ledger. Every prompt passes through it: one that is dequeued
        became a turn of its own (UserPromptSubmit exports it as user_prompt); one that is
        removed was absorbed into the running turn: that is a queued message."""
        op, content = obj.get("operation"), obj.get("content")
        if op == "enqueue":
            if (
                isinstance(content, str)
                and content.strip()
                and not content.lstrip().startswith("<task-notification>")
            ):
                self.pending = [*self.pending[-63:], [_digest(content), content, ts]]
            else:
                self.pending = [*self.pending[-63:], ["", "", ts]]  # keeps dequeues in step
            return []
        if op == "dequeue":
            self.pending = self.pending[1:]
            return []
        if op == "popAll":
            self.pending = []
            return []
        if op != "remove":
            return []
        entry = None
        if isinstance(content, str) and content:
            dig = _digest(content)
            entry = next((e for e in self.pending if e[0] == dig), None)
        elif self.pending:
            entry = self.pending[0]
        if entry is None or not entry[1]:
            if entry is not None:
                self.pending.remove(entry)
            return []
        self.pending.remove(entry)
        self.queued = [*self.queued[-255:], entry[0]]  # its queued_command attachment follows
        return [self._queued(entry[1], entry[2] or ts, draft, "absorbed")]

    def _line(self, obj: dict[str, Any], ts: str | None, draft: MakeDraft) -> list[Draft]:
        kind = obj.get("type")
        if kind == "queue-operation":
            return self._queue_operation(obj, ts, draft)
        if kind == "attachment":
            att = obj.get("attachment")
            if not isinstance(att, dict) or att.get("type") != "queued_command":
                return []
            if att.get("commandMode", "prompt") != "prompt":
                return []
            origin = att.get("origin")
            if isinstance(origin, dict) and origin.get("kind") not in (None, "human"):
                return []
            text = transcript.message_text(att.get("prompt"))
            if not text.strip():
                return []
            dig = _digest(text)
            if dig in self.queued:
                self.queued.remove(dig)
                return []
            return [self._queued(text, ts, draft, "attachment")]
        if kind == "user":
            if transcript.classify_user(obj) == "prompt":
                turn = Turn(ts=ts)
                if self.pending_stops:
                    self.pending_stops -= 1
                    turn.stopped = True
                self.turns.append(turn)
            return []
        if kind == "assistant" and self.turns:
            msg = obj.get("message") if isinstance(obj.get("message"), dict) else {}
            text = transcript.message_text(msg.get("content"))
            if not text:
                return []
            turn = self.turns[-1]
            mid = msg.get("id")
            if turn.msg == mid and turn.text:
                turn.text += "\n" + text
            else:
                turn.text, turn.msg = text, mid
            turn.ts = ts or turn.ts
        return []


def _digest(text: str) -> str:
    """A keyed digest (the redaction key's HMAC): it is stored in build.json, where an
    unkeyed one would let a reader confirm a guessed message. Unkeyed only when the key
    cannot be had (masking then fails too, and says so)."""
    data = text.encode("utf-8", "surrogatepass")
    try:
        from ...redact import install_key

        return hmac.new(install_key(), data, hashlib.sha256).hexdigest()[:24]
    except Exception:
        return hashlib.sha256(data).hexdigest()[:24]


REREAD_MAX = 32 << 20  # how far back from the offset a restart looks for lost texts


def _reread(t: Tracker, turns: list[Turn]) -> None:
    """After a restart: the reply texts of `turns` (by message id) and the queued texts
    of `t.pending` (by digest), read again from the transcript's last REREAD_MAX bytes
    before the offset. A text not found is given up, logged content-free."""
    by_msg = {turn.msg: turn for turn in turns if turn.msg}
    needs = {e[0] for e in t.pending if e[1] is None and e[0]}
    found: dict[str, str] = {}
    if t.transcript and (by_msg or needs):
        needles = [json.dumps(m).encode() for m in by_msg] + [b'"enqueue"'] * bool(needs)
        uuids: set[str] = set()
        try:
            with open(t.transcript, "rb") as f:
                start = max(0, t.offset - REREAD_MAX)
                f.seek(start)
                data = f.read(t.offset - start)
        except OSError:
            data = b""
        for line in data.split(b"\n")[1 if start else 0 :]:
            if not any(n in line for n in needles):
                continue
            for obj in transcript.decode_line(line):
                uid = obj.get("uuid")
                if obj.get("isSidechain") or (isinstance(uid, str) and uid in uuids):
                    continue  # as sync skips them: a resume repeats lines
                if isinstance(uid, str):
                    uuids.add(uid)
                msg = obj.get("message") if isinstance(obj.get("message"), dict) else {}
                turn = by_msg.get(msg.get("id")) if obj.get("type") == "assistant" else None
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
