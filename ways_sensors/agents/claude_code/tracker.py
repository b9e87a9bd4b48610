"""What a Claude Code session's records need beyond one payload: the transcript, followed.

Two sections come from the transcript, through the per-session `Tracker` (persisted by
the dispatcher as JSON, so "exported once" survives restarts):

* `queued_message`: each message typed while the agent worked and absorbed into the
  running turn. The client leaves up to three sightings of one: a `queue-operation`
  enqueue later `remove`d, a `queued_command` attachment, and a UserPromptSubmit that
  repeats the running turn's prompt_id (builder.py); whichever is read first is
  exported, the others are skipped (`sighting`), so it goes out once, never also as a
  user_prompt. Every prompt passes through the queue; one that is `dequeue`d became a
  turn of its own and is the user_prompt record. Task notifications are not typed (a
  UserPromptSubmit carrying one is a user_prompt marked `origin: client`); `popAll`
  was pulled back.
* `assistant_response` for replies that never reached a `Stop` (interrupted): the
  tracker splits the transcript into turns at each prompt-like user line; a `Stop`
  marks the newest turn as answered (its text comes from the payload's
  `last_assistant_message`, because the transcript may lag), and older turns that were
  never answered are exported from the transcript, at that `Stop` or at `SessionEnd`.
  Thinking blocks are never read.

Two more things are read from the same lines: each turn's API calls (usage.py: the
model and token usage its `assistant_response` carries) and the permission decisions
the client wrote beside each tool result (permissions.py: `permission` records, once
per call). A subagent's file is read whole at its SubagentStop (`agent_file`).

The builder (builder.py) decides when to read; this module reads and remembers.
"""

from __future__ import annotations

import os
import stat

from ... import jsoncore
from ...plain import Plain, assign
from ...records import Draft
from ..kit import sessionfile
from . import permissions, transcript, usage
from .queued import QueueLedger
from .reread import Turn, digest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar

    MakeDraft = Callable[..., Draft]  # builder.py's draft(section, data, **overrides)
MAX_SEEN = 4096
MAX_CALLS = 128  # recent tool calls remembered for joining requests and decisions
MAX_DECIDED = 1024
MAX_AGENT_FILE = 256 << 20  # a subagent file larger than this is not read for usage


class Tracker(QueueLedger, Plain):
    """What one session's records depend on beyond a single payload; JSON-persisted
    (its FIELDS, in this order: to_json)."""

    transcript: str | None
    offset: int
    started: bool
    turns: list[Turn]
    pending_stops: int
    queued: list[list[Any]]  # [digest, [sightings]] exported
    prompts: list[str]  # prompt_ids UserPromptSubmit began
    pending: list[list[Any]]  # [digest, text, ts] still in the queue
    seen: list[str]  # recent line uuids (resumes repeat lines)
    agents: list[str]  # agent ids seen at SubagentStart
    compact_trigger: str | None
    calls: list[list[Any]]  # [tool_use_id, name, key, agent, mode]; key: _keyed()
    decided: list[str]  # tool_use_ids whose decision went out
    mode: str | None  # the newest permission mode a payload named
    DEFAULTS: ClassVar[dict[str, Any]] = dict.fromkeys(("transcript", "offset", "started", "turns"))
    DEFAULTS.update(offset=0, started=False, turns=[], pending_stops=0, queued=[], prompts=[])
    DEFAULTS.update(pending=[], seen=[], agents=[], compact_trigger=None, calls=[], decided=[])
    DEFAULTS["mode"] = None
    FIELDS = tuple(DEFAULTS)

    def __init__(self, **values: Any) -> None:
        assign(self, self.DEFAULTS, values)
        self._seen = set(self.seen)  # membership; the list keeps the order
        self._calls = {c[0]: c for c in self.calls}  # by tool_use_id; the list keeps the order
        # an older build.json kept bare digests of removals whose attachment follows
        self.queued = [[e, ["remove"]] if isinstance(e, str) else e for e in self.queued]
        self.stats = sessionfile.ReadStats()  # this process's reading, for the logs only

    def to_json(self) -> str:
        """The state a restart needs, never content (build.json is at rest for the
        session's life): a turn keeps its message id and time, and `held` when a reply
        may still be recovered from it; a queued message its keyed digest and time.
        from_json reads those texts back from the transcript."""
        self._keyed()
        d = {name: getattr(self, name) for name in self.FIELDS}
        d["turns"] = [turn.as_dict() for turn in self.turns]
        for t, turn in zip(d["turns"], self.turns, strict=True):
            t["text"] = None
            t["held"] = bool(turn.text) and not turn.stopped
        d["pending"] = [[dig, None if text else "", ts] for dig, text, ts in self.pending]
        return jsoncore.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> Tracker:
        d = jsoncore.loads(text)
        held = [bool(t.pop("held", False)) for t in d.get("turns", [])]
        d["turns"] = [Turn(**t) for t in d.get("turns", [])]
        tracker = cls(**{k: v for k, v in d.items() if k in cls.FIELDS})
        want = [t for t, h in zip(tracker.turns, held, strict=True) if h and t.text is None]
        if want or any(e[1] is None for e in tracker.pending):
            from .reread import reread

            reread(tracker.transcript, tracker.offset, tracker.pending, want)
        return tracker

    # --- reading the transcript -------------------------------------------------------

    def fast_forward(self, path: str, size: int) -> None:
        """A new tracker at a session start: what the transcript held when the hook ran
        (`size` bytes; -1: all of it) was handled by the process (or dispatcher) before
        us, so start reading there. Raises OSError as sessionfile.line_start does."""
        self.transcript = path
        start = sessionfile.line_start(path, size)
        if start is not None:
            self.offset = start

    def sync(
        self, path: str, draft: MakeDraft, limit: int = -1, one_turn: bool = False
    ) -> list[Draft]:
        """Read the transcript's new complete lines (a bounded share: read_from), within
        its first `limit` bytes if >= 0 (its size when the hook ran); return the drafts
        they make. `one_turn`: stop before a prompt that begins a turn after the open one
        (a Stop waiting for its reply's last call). OSError: the offset stays."""
        if self.transcript != path:
            self.transcript, self.offset = path, 0
        out: list[Draft] = []
        last_ts = None
        for end, objs in sessionfile.read_lines(path, self.offset, self.stats, limit):
            if one_turn and self._open() and any(map(self._new_prompt, objs)):
                break  # the next turn's prompt: read by the events of that turn
            self.offset = end
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

    def _open(self) -> bool:
        return bool(self.turns) and not self.turns[-1].stopped

    def _new_prompt(self, obj: dict[str, Any]) -> bool:
        uid, main = obj.get("uuid"), obj.get("type") == "user" and not obj.get("isSidechain")
        new = main and not (isinstance(uid, str) and uid in self._seen)
        return new and transcript.classify_user(obj) == "prompt"

    def answered(self) -> bool:
        """Whether the newest turn is open and its reply's last API call is on disk."""
        if not self.turns or self.turns[-1].stopped:
            return False
        state = self.turns[-1].usage
        return state is not None and bool(state["final"])

    def recovered(self, turn: Turn, draft: MakeDraft) -> Draft:
        """The reply of a turn no Stop answered, from the transcript, marked interrupted."""
        d = draft(
            "assistant_response",
            {"text": turn.text, "interrupted": True, **usage.recovered_fields(turn.usage)},
            agent_id=None,
            agent_type="main",
        )
        if turn.ts:
            d.timestamp = turn.ts
        turn.stopped = True
        return d

    # --- tool calls and permission decisions -----------------------------------------

    def note_call(
        self, tool_use_id: Any, name: Any, tool_input: Any, agent_id: Any, mode: Any
    ) -> None:
        """A tool call (PreToolUse, or a tool_use block read from the transcript)."""
        if not isinstance(tool_use_id, str):
            return
        if isinstance(mode, str) and not agent_id:
            self.mode = mode
        known = self._calls.get(tool_use_id)
        if known is not None:
            if isinstance(mode, str):
                known[4] = mode
            return
        key = permissions.Unkeyed(name, tool_input, agent_id or None)  # keyed when it is needed
        mode = mode if isinstance(mode, str) else None
        while len(self.calls) >= MAX_CALLS:
            gone = self.calls.pop(0)
            if self._calls.get(gone[0]) is gone:
                del self._calls[gone[0]]
        self.calls.append(call := [tool_use_id, name, key, agent_id, mode])
        self._calls[tool_use_id] = call

    def find_call(self, name: Any, tool_input: Any, agent_id: Any) -> str | None:
        """The newest undecided call of this agent with this tool and input."""
        key = permissions.call_key(name, tool_input, agent_id or None)
        self._keyed()
        for tid, _, k, _, _ in reversed(self.calls):
            if k == key and tid not in self.decided:
                return str(tid)
        return None

    def _keyed(self) -> None:
        """Give each remembered call its key (permissions.call_key), made only when one
        is compared or saved: a drain saves the build state every few thousand frames, so
        most calls leave the MAX_CALLS window before anyone asks for their key."""
        for call in self.calls:
            if isinstance(call[2], permissions.Unkeyed):
                call[2] = call[2].key()

    def decide(self, tool_use_id: str) -> bool:
        """Mark a call decided; False when its decision already went out."""
        if tool_use_id in self.decided:
            return False
        self.decided = [*self.decided[-(MAX_DECIDED - 1) :], tool_use_id]
        return True

    def _decisions(
        self, obj: dict[str, Any], ts: str | None, draft: MakeDraft, agent: tuple[Any, Any]
    ) -> list[Draft]:
        out = []
        for tid, detail in permissions.result_decisions(obj):
            call = self._calls.get(tid)
            name, mode = (call[1], call[4]) if call else (None, None)
            data = permissions.decision_data(detail, tid, name, mode or self.mode)
            if data is None or not self.decide(tid):
                continue
            d = draft("permission", data, agent_id=agent[0], agent_type=agent[1])
            if ts:
                d.timestamp = ts
            out.append(d)
        return out

    def agent_file(
        self, path: Any, agent: tuple[Any, Any], draft: MakeDraft
    ) -> tuple[dict[str, Any] | None, list[Draft]]:
        """A subagent's own file, whole: its API calls (None when it cannot be read)
        and the permission decisions of its tool calls."""
        if not isinstance(path, str) or not path:
            return None, []
        try:
            st = os.stat(path)  # the payload names it: only a regular file is read
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_AGENT_FILE:
                return None, []
            objs = list(sessionfile.iter_file(path))
        except OSError:
            return None, []
        state, out, last_ts = usage.new(), [], None
        for obj in objs:
            ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else last_ts
            last_ts = ts
            if obj.get("type") == "assistant":
                usage.add(state, obj.get("message"))
                for tid, name, tool_input in permissions.tool_uses(obj.get("message")):
                    self.note_call(tid, name, tool_input, agent[0], None)
            elif obj.get("type") == "user":
                out.extend(self._decisions(obj, ts, draft, agent))
        return state, out

    # --- one transcript line ------------------------------------------------------------

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
            if not self.sighting(digest(text), "attachment"):
                return []
            return [self._queued(text, ts, draft, "attachment")]
        if kind == "user":
            cls = transcript.classify_user(obj)
            if cls == "prompt":
                turn = Turn(ts=ts)
                if self.pending_stops:
                    self.pending_stops -= 1
                    turn.stopped = True
                self.turns.append(turn)
            elif cls == "tool_result":
                return self._decisions(obj, ts, draft, (None, "main"))
            return []
        if kind == "assistant":
            msg = _msg if isinstance(_msg := obj.get("message"), dict) else {}
            for tid, name, tool_input in permissions.tool_uses(msg):
                self.note_call(tid, name, tool_input, None, None)
            if not self.turns:
                return []
            if self.turns[-1].usage is None:
                self.turns[-1].usage = usage.new()
            usage.add(self.turns[-1].usage, msg)
            if msg.get("model") == usage.SYNTHETIC:
                return []  # a rendered API error, not the reply
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
