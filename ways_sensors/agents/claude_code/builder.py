"""Claude Code hook payloads to Drafts: one handler per hook event (SPEC section 4's table).

`Builder.build(event, payload, ts_ns)` looks the event up in HANDLERS, an explicit
table: an event it does not name (a newer Claude Code's, or a name that happens to
match a helper, like `line`) yields no records, never an attribute of the builder.
Payload fields a handler does not use are kept whole under `data.extra`. Replies that
never reached a Stop, queued messages, each reply's model and token usage and the
permission decisions come from the transcript (tracker.py, usage.py, permissions.py);
which session a resumed or cleared one continues from links.py.

A transcript is the agent's file at a path the payload names: every reading of it goes
through `_reading` (the kit's `guarded`: a failure is logged content-free and the
records the payload makes by itself are built all the same).
"""

from __future__ import annotations

import time

from ...records import Draft
from ...state.events import iso_utc
from ..drafting import split_mcp
from ..kit import building
from ..kit.building import guarded
from . import links, usage
from .payload import extra_of, tool_data
from .tracker import Tracker

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from .tracker import MakeDraft

    T = TypeVar("T")

# how long a Stop's reply waits for its last API call to reach the transcript (the
# client may write it just after the hook ran), re-reading every USAGE_POLL seconds, and
# only while the file is being written (usage.fresh); then the reply goes out without
# usage, saying so
USAGE_WAIT = 2.0
CLIENT_WRITTEN = ("<task-notification>",)  # prompts the client writes itself
USAGE_POLL = 0.025


class Builder:
    """Turns one session's spool entries into drafts, in spool order (SessionBuilder)."""

    def __init__(self, tracker: Tracker | None = None, transcript: bool = True) -> None:
        self.tracker = tracker or Tracker()
        self.transcript = transcript  # False: payload-only (the blocking path)
        self._transcript_size = -1
        self._ts_ns = 0

    def state(self) -> str:
        return self.tracker.to_json()

    def build(
        self, event: str, payload: dict[str, Any], ts_ns: int, transcript_size: int = -1
    ) -> list[Draft]:
        """Drafts for one hook event; `transcript_size` is the transcript's size when the
        hook ran (-1: not measured): where a new tracker starts reading at SessionStart,
        how far the turn events read (a lagging dispatcher reads no later turn)."""
        handler = HANDLERS.get(event)
        if handler is None:
            return []
        self._transcript_size = transcript_size
        self._ts_ns = ts_ns
        if event == "PreToolUse":  # joins a later PermissionRequest and decision to the call
            self.tracker.note_call(
                payload.get("tool_use_id"),
                payload.get("tool_name"),
                payload.get("tool_input"),
                payload.get("agent_id") or None,
                payload.get("permission_mode"),
            )
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

        return handler(self, payload, draft)

    # --- one method per hook event -------------------------------------------------

    def user_prompt_submit(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        """A prompt that begins a turn is a user_prompt; one whose prompt_id is the
        running turn's and whose text waits in the client's input queue (or was seen
        leaving it) was typed while the agent worked and absorbed into that turn: a
        queued_message (tracker.py, exported once whichever sighting comes first). A
        `<task-notification>` block is written by the client, not typed: `origin`."""
        prompt, pid, t = p.get("prompt"), p.get("prompt_id"), self.tracker
        if isinstance(pid, str) and pid in t.prompts:
            found = self._sync(p, draft)  # its queue entry is on disk before this hook
            if t.in_queue(prompt):
                return [*found, *t.submitted(prompt, draft)]
            return [*found, self._prompt(p, prompt, draft)]  # sent again, not queued
        if isinstance(pid, str):
            t.prompts = [*t.prompts[-63:], pid]
        return [self._prompt(p, prompt, draft)]

    def _prompt(self, p: dict[str, Any], prompt: Any, draft: MakeDraft) -> Draft:
        client = isinstance(prompt, str) and prompt.lstrip().startswith(CLIENT_WRITTEN)
        data = {"prompt": prompt, "origin": "client" if client else "human"}
        return draft("user_prompt", {**data, "extra": extra_of(p, {"prompt"})})

    def pre_tool_use(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        data = tool_data(p)
        data["input"] = p.get("tool_input")
        data["extra"] = extra_of(p, {"tool_name", "tool_use_id", "tool_input"})
        return [draft("tool_call", data)]

    def post_tool_use(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        data = tool_data(p)
        data["status"] = "success"
        data["output"] = p.get("tool_response")
        data["extra"] = extra_of(p, {"tool_name", "tool_use_id", "tool_response"})
        return [draft("tool_result", data), *self._sync(p, draft)]

    def post_tool_use_failure(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        data = tool_data(p)
        data["status"] = "failure"
        data["error"] = p.get("error")
        data["extra"] = extra_of(p, {"tool_name", "tool_use_id", "error"})
        return [draft("tool_result", data), *self._sync(p, draft)]

    def stop(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        out = self._sync(p, draft)  # the transcript as it stood when the hook ran
        t = self.tracker
        deadline = time.monotonic() + USAGE_WAIT
        path = p.get("transcript_path")
        turns = len(t.turns)  # the Stop answers the newest of these, not a later one
        waited = False
        while self.transcript and not t.answered() and time.monotonic() < deadline:
            if waited:  # the reply's last call may follow the hook: read on, this turn only
                if not usage.fresh(path):
                    break  # nobody is writing it: what is missing will not come
                time.sleep(USAGE_POLL)
            waited = True  # (a dispatcher that lags finds it on disk at once)
            out += self._sync(p, draft, one_turn=True)
            if len(t.turns) != turns:
                break  # this turn's prompt reached the transcript only now
        # the turns the transcript already held when this Stop was read; a wait may have
        # read into the next turn, which stays open for its own Stop
        mine, later = t.turns[:turns], t.turns[turns:]
        for turn in mine[:-1]:
            if not turn.stopped and turn.text:
                out.append(t.recovered(turn, draft))
        spent = usage.fields(None, self._missing())
        if mine and not mine[-1].stopped:
            mine[-1].stopped = True
            if self.transcript:
                spent = usage.fields(mine[-1].usage)
            t.turns = [mine[-1], *later]
        elif later:  # this turn's prompt reached the transcript while we waited
            later[0].stopped = True
            if self.transcript:
                spent = usage.fields(later[0].usage)
            t.turns = later
        else:  # the prompt of this turn is not in the transcript yet
            t.turns = mine[-1:]
            t.pending_stops += 1
        text = p.get("last_assistant_message")
        out.append(
            draft(
                "assistant_response",
                {
                    "text": text if isinstance(text, str) else "",
                    **spent,
                    "extra": extra_of(p, {"last_assistant_message"}),
                },
            )
        )
        return out

    def subagent_start(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
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
                    "extra": extra_of(p, set()),
                },
            )
        ]

    def subagent_stop(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        aid = p.get("agent_id")
        kind = p.get("agent_type") or ""
        internal = not kind or (self.tracker.started and aid not in self.tracker.agents)
        agent_type = "internal" if internal else kind
        text = p.get("last_assistant_message")
        extra = extra_of(p, {"last_assistant_message"})
        state, decisions = None, []
        path = p.get("agent_transcript_path")
        deadline, size = time.monotonic() + USAGE_WAIT, -1
        while self.transcript:  # the subagent's own file: its API calls and decisions
            if usage.size(path) != size:  # read (again) only what changed
                size = usage.size(path)
                state, more = self.tracker.agent_file(path, (aid, agent_type), draft)
                decisions += more  # a decision goes out once: a re-read finds only new ones
            if state is None or state["final"] or time.monotonic() >= deadline:
                break
            if not usage.fresh(path):
                break
            time.sleep(USAGE_POLL * 4)  # its last call is not on disk yet: look again
        missing = usage.MISSING_UNREADABLE if state is None else usage.MISSING_PENDING
        if state is None and self.transcript and usage.size(path) < 0:
            missing = usage.MISSING_ABSENT  # an internal agent: the client keeps no file
        spent = usage.fields(state, missing)
        return [
            *decisions,
            draft(
                "subagent",
                {"phase": "stop", "agent_id": aid, "agent_type": kind, **spent, "extra": extra},
                agent_type=agent_type,
            ),
            draft(
                "assistant_response",
                {"text": text if isinstance(text, str) else "", **spent, "extra": extra},
                agent_type=agent_type,
            ),
        ]

    def session_start(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        t = self.tracker
        path = p.get("transcript_path")
        fresh = not t.started and not t.turns and t.offset == 0
        if self.transcript and fresh and isinstance(path, str):
            self._reading(p, lambda: t.fast_forward(path, self._transcript_size), None)
        t.started = True
        data: dict[str, Any] = {"source": p.get("source"), "model": p.get("model")}
        if p.get("source") in links.CONTINUING:
            data["previous_session_id"] = (
                links.previous(p, self._transcript_size, self._ts_ns) if self.transcript else None
            )
        data["extra"] = extra_of(p, {"source", "model"})
        out = [draft("session_start", data)]
        if p.get("source") == "compact":
            out.append(
                draft(
                    "compaction",
                    {
                        "phase": "after",
                        "trigger": t.compact_trigger,
                        "instructions": None,
                        "extra": extra_of(p, {"source", "model"}),
                    },
                )
            )
        return out

    def session_end(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        if p.get("reason") == "clear" and self.transcript:
            links.note_clear(p, self._ts_ns)  # the session /clear starts next links here
        out = self._sync(p, draft)
        for turn in self.tracker.turns:
            if not turn.stopped and turn.text:
                out.append(self.tracker.recovered(turn, draft))
        self.tracker.turns = []
        out.append(draft("session_end", building.session_end(p, extra_of)))
        return out

    def pre_compact(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        self.tracker.compact_trigger = p.get("trigger")
        return [draft("compaction", building.compaction(p, extra_of))]

    def post_compact(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        summary = p.get("compact_summary")
        return [
            draft(
                "compaction",
                {
                    "phase": "summary",
                    "trigger": p.get("trigger"),
                    "summary": summary if isinstance(summary, str) else None,
                    "extra": extra_of(p, {"trigger", "compact_summary"}),
                },
            )
        ]

    def permission_request(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        name, tool_input = p.get("tool_name"), p.get("tool_input")
        data: dict[str, Any] = {
            "phase": "request",
            "tool_name": name,
            "tool_use_id": self.tracker.find_call(name, tool_input, p.get("agent_id") or None),
        }
        mcp = split_mcp(name) if isinstance(name, str) else None
        if mcp:
            data["mcp_server"], data["mcp_tool"] = mcp
        data["input"] = tool_input
        data["mode"] = p.get("permission_mode")
        data["suggestions"] = p.get("permission_suggestions")
        used = {"tool_name", "tool_input", "permission_mode", "permission_suggestions"}
        data["extra"] = extra_of(p, used)
        return [draft("permission", data)]

    def permission_denied(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        """Auto mode's classifier refused the call: a decision of its own (once)."""
        tid = p.get("tool_use_id")
        if isinstance(tid, str) and not self.tracker.decide(tid):
            return []
        data = {
            "phase": "decision",
            "tool_name": p.get("tool_name"),
            "tool_use_id": tid if isinstance(tid, str) else None,
            "decision": "denied",
            "source": "classifier",
            "mode": p.get("permission_mode"),
            "reason": p.get("reason"),
            "input": p.get("tool_input"),
        }
        used = {"tool_name", "tool_use_id", "tool_input", "permission_mode", "reason"}
        data["extra"] = extra_of(p, used)
        return [draft("permission", data)]

    def notification(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        data = {
            "type": p.get("notification_type"),
            "message": p.get("message"),
            "title": p.get("title"),
            "extra": extra_of(p, {"notification_type", "message", "title"}),
        }
        return [draft("notification", data)]

    def stop_failure(self, p: dict[str, Any], draft: MakeDraft) -> list[Draft]:
        """The turn ended on an API error instead of a Stop: an `error` record; text the
        turn had written is exported as an interrupted reply, with its calls' usage."""
        out = self._sync(p, draft)
        t = self.tracker
        answered = bool(t.turns) and not t.turns[-1].stopped
        for turn in t.turns:
            if not turn.stopped and turn.text:
                out.append(t.recovered(turn, draft))
            turn.stopped = True
        t.turns = t.turns[-1:]
        if not answered:  # the prompt of this turn is not in the transcript yet
            t.pending_stops += 1
        text = p.get("last_assistant_message")
        data = {
            "error": p.get("error"),
            "details": p.get("error_details"),
            "text": text if isinstance(text, str) else None,
            "extra": extra_of(p, {"error", "error_details", "last_assistant_message"}),
        }
        out.append(draft("error", data))
        return out

    def _missing(self) -> str:
        return usage.MISSING_PENDING if self.transcript else usage.MISSING_UNREADABLE

    def _sync(self, p: dict[str, Any], draft: MakeDraft, one_turn: bool = False) -> list[Draft]:
        """The drafts of the transcript's new lines (none without one): up to its size
        when the hook ran, or on past it within the open turn (`one_turn`)."""
        path = p.get("transcript_path")
        if not self.transcript or not isinstance(path, str) or not path:
            return []
        limit = -1 if one_turn else self._transcript_size
        return self._reading(p, lambda: self.tracker.sync(path, draft, limit, one_turn), [])

    def _reading(self, p: dict[str, Any], read: Callable[[], T], failed: T) -> T:
        return guarded(p, self.tracker.stats, read, failed)


# hook event -> its handler: the only events the builder knows
HANDLERS: dict[str, Callable[[Builder, dict[str, Any], MakeDraft], list[Draft]]] = {
    "UserPromptSubmit": Builder.user_prompt_submit,
    "PreToolUse": Builder.pre_tool_use,
    "PostToolUse": Builder.post_tool_use,
    "PostToolUseFailure": Builder.post_tool_use_failure,
    "Stop": Builder.stop,
    "SubagentStart": Builder.subagent_start,
    "SubagentStop": Builder.subagent_stop,
    "SessionStart": Builder.session_start,
    "SessionEnd": Builder.session_end,
    "PreCompact": Builder.pre_compact,
    "PostCompact": Builder.post_compact,
    "PermissionRequest": Builder.permission_request,
    "PermissionDenied": Builder.permission_denied,
    "Notification": Builder.notification,
    "StopFailure": Builder.stop_failure,
}
