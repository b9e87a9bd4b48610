"""Section records: from a spool entry (and the transcript) to what consumers receive.

The record (schema `ways.sensor.record/1`, SPEC section 5):

    {"schema", "section", "seq", "session_id", "agent_id", "agent_type", "timestamp",
     "project", "hook_event", "prompt_id"?, "data": {...}, "test"?,
     then per rule: "sensor", "rule", "rule_seq", "redactions"?, "chain"?}

`build(entry, tracker)` yields Drafts (section, data, agent, time); the dispatcher
numbers them (`seq`) and adds the rule fields. Payload fields the section table does
not name are kept whole under `data.extra`: no whitelist.

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
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from . import transcript
from .events import iso_utc

SCHEMA = "ways.sensor.record/1"
COMMON = frozenset({"session_id", "hook_event_name", "prompt_id", "agent_id", "agent_type"})
MAX_SEEN = 4096


@dataclass
class Draft:
    section: str
    hook_event: str
    timestamp: str
    data: dict[str, Any]
    agent_id: str | None = None
    agent_type: str = "main"
    prompt_id: str | None = None


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

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Tracker:
        d = json.loads(text)
        d["turns"] = [Turn(**t) for t in d.get("turns", [])]
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def split_mcp(tool_name: str) -> tuple[str, str] | None:
    """`mcp__server__tool` -> (server, tool); plugin servers keep their prefix."""
    if not tool_name.startswith("mcp__"):
        return None
    parts = tool_name.split("__", 2)
    if len(parts) < 3 or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


def _extra(payload: dict[str, Any], used: set[str]) -> dict[str, Any]:
    extra = {k: v for k, v in payload.items() if k not in COMMON and k not in used}
    if "agent_type" in payload and not payload.get("agent_id"):
        extra["agent_type"] = payload["agent_type"]  # --agent sessions: still the main agent
    return extra


def _tool_data(p: dict[str, Any]) -> dict[str, Any]:
    name = p.get("tool_name")
    data: dict[str, Any] = {"tool_name": name, "tool_use_id": p.get("tool_use_id")}
    mcp = split_mcp(name) if isinstance(name, str) else None
    if mcp:
        data["mcp_server"], data["mcp_tool"] = mcp
    return data


class Builder:
    """Turns one session's spool entries into drafts, in spool order."""

    def __init__(self, tracker: Tracker | None = None, transcript: bool = True):
        self.tracker = tracker or Tracker()
        self.transcript = transcript  # False: payload-only (the blocking path)
        self._seen = set(self.tracker.seen)  # membership; the list keeps the order

    # --- entry point ----------------------------------------------------------------

    def build(
        self, event: str, payload: dict[str, Any], ts_ns: int, transcript_size: int = -1
    ) -> list[Draft]:
        """Drafts for one hook event; `transcript_size` is the transcript's size when the
        hook ran (SessionStart only), where a new tracker starts reading."""
        self._transcript_size = transcript_size
        ts = iso_utc(ts_ns)
        agent_id = payload.get("agent_id") or None
        agent_type = "main"
        if agent_id:
            agent_type = payload.get("agent_type") or "internal"
        prompt_id = payload.get("prompt_id") if isinstance(payload.get("prompt_id"), str) else None

        def draft(section: str, data: dict[str, Any], **kw: Any) -> Draft:
            d = Draft(section, event, ts, data, agent_id, agent_type, prompt_id)
            for k, v in kw.items():
                setattr(d, k, v)
            return d

        method = getattr(self, "_" + event, None)
        if method is None:
            return []
        return method(payload, draft)

    # --- one method per hook event (SPEC section 4's table) ------------------------

    def _UserPromptSubmit(self, p, draft):
        return [draft("user_prompt", {"prompt": p.get("prompt"), "extra": _extra(p, {"prompt"})})]

    def _PreToolUse(self, p, draft):
        data = _tool_data(p)
        data["input"] = p.get("tool_input")
        data["extra"] = _extra(p, {"tool_name", "tool_use_id", "tool_input"})
        return [draft("tool_call", data)]

    def _PostToolUse(self, p, draft):
        data = _tool_data(p)
        data["status"] = "success"
        data["output"] = p.get("tool_response")
        data["extra"] = _extra(p, {"tool_name", "tool_use_id", "tool_response"})
        return [draft("tool_result", data), *self._sync(p, draft)]

    def _PostToolUseFailure(self, p, draft):
        data = _tool_data(p)
        data["status"] = "failure"
        data["error"] = p.get("error")
        data["extra"] = _extra(p, {"tool_name", "tool_use_id", "error"})
        return [draft("tool_result", data), *self._sync(p, draft)]

    def _Stop(self, p, draft):
        out = self._sync(p, draft)
        t = self.tracker
        for turn in t.turns[:-1]:
            if not turn.stopped and turn.text:
                out.append(self._recovered(turn, draft))
        if t.turns and not t.turns[-1].stopped:
            t.turns = [t.turns[-1]]
            t.turns[-1].stopped = True
        else:  # the prompt of this turn is not in the transcript yet
            t.turns = t.turns[-1:]
            t.pending_stops += 1
        text = p.get("last_assistant_message")
        out.append(
            draft(
                "assistant_response",
                {
                    "text": text if isinstance(text, str) else "",
                    "extra": _extra(p, {"last_assistant_message"}),
                },
            )
        )
        return out

    def _SubagentStart(self, p, draft):
        aid = p.get("agent_id")
        if isinstance(aid, str) and aid not in self.tracker.agents:
            self.tracker.agents = [*self.tracker.agents[-255:], aid]
        return [
            draft(
                "subagent",
                {
                    "phase": "start",
                    "agent_id": aid,
                    "agent_type": p.get("agent_type"),
                    "extra": _extra(p, set()),
                },
            )
        ]

    def _SubagentStop(self, p, draft):
        aid = p.get("agent_id")
        kind = p.get("agent_type") or ""
        internal = not kind or (self.tracker.started and aid not in self.tracker.agents)
        agent_type = "internal" if internal else kind
        text = p.get("last_assistant_message")
        extra = _extra(p, {"last_assistant_message"})
        return [
            draft(
                "subagent",
                {"phase": "stop", "agent_id": aid, "agent_type": kind, "extra": extra},
                agent_type=agent_type,
            ),
            draft(
                "assistant_response",
                {"text": text if isinstance(text, str) else "", "extra": extra},
                agent_type=agent_type,
            ),
        ]

    def _SessionStart(self, p, draft):
        t = self.tracker
        if self.transcript and not t.started and not t.turns and t.offset == 0:
            self._fast_forward(p)
        t.started = True
        out = [
            draft(
                "session_start",
                {
                    "source": p.get("source"),
                    "model": p.get("model"),
                    "extra": _extra(p, {"source", "model"}),
                },
            )
        ]
        if p.get("source") == "compact":
            out.append(
                draft(
                    "compaction",
                    {
                        "phase": "after",
                        "trigger": t.compact_trigger,
                        "instructions": None,
                        "extra": _extra(p, {"source", "model"}),
                    },
                )
            )
        return out

    def _SessionEnd(self, p, draft):
        out = self._sync(p, draft)
        for turn in self.tracker.turns:
            if not turn.stopped and turn.text:
                out.append(self._recovered(turn, draft))
        self.tracker.turns = []
        out.append(
            draft("session_end", {"reason": p.get("reason"), "extra": _extra(p, {"reason"})})
        )
        return out

    def _PreCompact(self, p, draft):
        self.tracker.compact_trigger = p.get("trigger")
        return [
            draft(
                "compaction",
                {
                    "phase": "before",
                    "trigger": p.get("trigger"),
                    "instructions": p.get("custom_instructions"),
                    "extra": _extra(p, {"trigger", "custom_instructions"}),
                },
            )
        ]

    def _WayEvent(self, p, draft):
        data = {k: v for k, v in p.items() if k not in COMMON}
        data.setdefault("kind", "fired")
        return [draft("way_event", data)]

    # --- the transcript ---------------------------------------------------------------

    def _recovered(self, turn: Turn, draft) -> Draft:
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

    def _fast_forward(self, p: dict[str, Any]) -> None:
        """A new tracker at a session start: what the transcript held when the hook ran
        was handled by the process (or dispatcher) before us, so start reading there."""
        path = p.get("transcript_path")
        if not isinstance(path, str):
            return
        self.tracker.transcript = path
        size = getattr(self, "_transcript_size", -1)
        try:
            with open(path, "rb") as f:
                data = f.read(size) if size >= 0 else f.read()
        except OSError:
            return
        self.tracker.offset = data.rfind(b"\n") + 1

    def _sync(self, p: dict[str, Any], draft) -> list[Draft]:
        """Read the transcript's new complete lines; return the queued messages found."""
        t = self.tracker
        path = p.get("transcript_path")
        if not self.transcript or not isinstance(path, str) or not path:
            return []
        if t.transcript != path:
            t.transcript, t.offset = path, 0
        objs, t.offset = transcript.read_from(path, t.offset)
        out: list[Draft] = []
        last_ts = None
        for obj in objs:
            ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else last_ts
            last_ts = ts
            uid = obj.get("uuid")
            if isinstance(uid, str):
                if uid in self._seen:
                    continue
                t.seen.append(uid)
                self._seen.add(uid)
                if len(t.seen) > 2 * MAX_SEEN:
                    del t.seen[: len(t.seen) - MAX_SEEN]
                    self._seen = set(t.seen)
            if obj.get("isSidechain"):
                continue
            out.extend(self._line(obj, ts, draft))
        return out

    def _queued(self, text: str, ts: str | None, draft, how: str) -> Draft:
        d = draft("queued_message", {"text": text, "via": how}, agent_id=None, agent_type="main")
        if ts:
            d.timestamp = ts
        return d

    def _queue_operation(self, obj: dict[str, Any], ts: str | None, draft) -> list[Draft]:
        """The input queue's ledger. Every prompt passes through it: one that is dequeued
        became a turn of its own (UserPromptSubmit exports it as user_prompt); one that is
        removed was absorbed into the running turn: that is a queued message."""
        t = self.tracker
        op, content = obj.get("operation"), obj.get("content")
        if op == "enqueue":
            if (
                isinstance(content, str)
                and content.strip()
                and not content.lstrip().startswith("<task-notification>")
            ):
                t.pending = [*t.pending[-63:], [_digest(content), content, ts]]
            else:
                t.pending = [*t.pending[-63:], ["", "", ts]]  # keeps dequeues in step
            return []
        if op == "dequeue":
            t.pending = t.pending[1:]
            return []
        if op == "popAll":
            t.pending = []
            return []
        if op != "remove":
            return []
        entry = None
        if isinstance(content, str) and content:
            dig = _digest(content)
            entry = next((e for e in t.pending if e[0] == dig), None)
        elif t.pending:
            entry = t.pending[0]
        if entry is None or not entry[1]:
            if entry is not None:
                t.pending.remove(entry)
            return []
        t.pending.remove(entry)
        t.queued = [*t.queued[-255:], entry[0]]  # its queued_command attachment follows
        return [self._queued(entry[1], entry[2] or ts, draft, "absorbed")]

    def _line(self, obj: dict[str, Any], ts: str | None, draft) -> list[Draft]:
        t = self.tracker
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
            if dig in t.queued:
                t.queued.remove(dig)
                return []
            return [self._queued(text, ts, draft, "attachment")]
        if kind == "user":
            if transcript.classify_user(obj) == "prompt":
                turn = Turn(ts=ts)
                if t.pending_stops:
                    t.pending_stops -= 1
                    turn.stopped = True
                t.turns.append(turn)
            return []
        if kind == "assistant" and t.turns:
            msg = obj.get("message") if isinstance(obj.get("message"), dict) else {}
            text = transcript.message_text(msg.get("content"))
            if not text:
                return []
            turn = t.turns[-1]
            mid = msg.get("id")
            if turn.msg == mid and turn.text:
                turn.text += "\n" + text
            else:
                turn.text, turn.msg = text, mid
            turn.ts = ts or turn.ts
        return []


def envelope(d: Draft, seq: int | None, session_id: str, project: str) -> dict[str, Any]:
    """The session-level record (without the rule fields); seq None off the spool."""
    rec: dict[str, Any] = {
        "schema": SCHEMA,
        "section": d.section,
        "seq": seq,
        "session_id": session_id,
        "agent_id": d.agent_id,
        "agent_type": d.agent_type,
        "timestamp": d.timestamp,
        "project": project,
        "hook_event": d.hook_event,
    }
    if d.prompt_id:
        rec["prompt_id"] = d.prompt_id
    rec["data"] = d.data
    return rec


def parse_payload(raw: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None
