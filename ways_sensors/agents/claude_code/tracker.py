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
        self.stats = transcript.ReadStats()  # this process's reading, for the logs only

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Tracker:
        d = json.loads(text)
        d["turns"] = [Turn(**t) for t in d.get("turns", [])]
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})

    # --- reading the transcript -------------------------------------------------------

    def fast_forward(self, path: str, size: int) -> None:
        """A new tracker at a session start: what the transcript held when the hook ran
        (`size` bytes; -1: all of it) was handled by the process (or dispatcher) before
        us, so start reading there. Raises OSError as transcript.line_start does."""
        self.transcript = path
        start = transcript.line_start(path, size)
        if start is not None:
            self.offset = start

    def sync(self, path: str, draft: MakeDraft) -> list[Draft]:
        """Read the transcript's new complete lines (a bounded share of them: see
        transcript.read_from); return the queued messages found. Raises OSError as
        read_from does, leaving the offset where it was."""
        if self.transcript != path:
            self.transcript, self.offset = path, 0
        objs, self.offset = transcript.read_from(path, self.offset, self.stats)
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
            msg = _msg if isinstance(_msg := obj.get("message"), dict) else {}
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
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]
