"""Codex CLI hook payloads to Drafts, one handler per event; failures recovered from the rollout.

Codex reports a failing command as an ordinary PostToolUse, without its exit code; the
rollout has it (rollout.py). So a shell tool's result is finished from the rollout:
`status: failure`, `exit_code` and `error` when the command failed. Codex writes that
line before it runs the PostToolUse hook, so it is normally there when the dispatcher
builds the entry; when it is not yet, the result is parked in the builder's state and
released by a later event of the session as soon as the rollout has it, and at the
latest at the turn's Stop (or SubagentStop, SessionEnd), as it stands then. A record
made without a rollout (Codex's `--ephemeral`, the blocking path) says `success`
unless the rollout's tail shows the failure. A rollout that cannot be read (a FIFO, a
device, a folder at its path) is logged content-free and the records are built from
the payload (agents/kit/building.py).

What stays at rest (the build cursor, and the ledger after the session folder goes):
the rollout's path and offset, each call's exit code and status, and a parked
result's call id and where its PostToolUse sits in the session's spool (`at`), never
a command's output or a result's text. A dispatcher that starts with parked results
reads their frames back from the spool (`restore`; the dispatcher keeps a spool
segment while a builder holds a frame in it: agents.protocols.HoldsFrames) and builds
them again from the payload; a frame that is gone (the session's folder was removed)
is counted and logged, content-free.

`turn_id` becomes the record's `prompt_id`; `agent_id`/`agent_type` name a subagent.
"""

from __future__ import annotations

from ... import jsoncore
from ...records import Draft
from ..drafting import Drafts, event_of, event_time, extra, subagent_of, text_or_empty, tool_data
from ..kit import building
from ..kit.building import guarded
from ..kit.sessionfile import ReadStats
from . import NAME, rollout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

COMMON = frozenset({"session_id", "hook_event_name", "turn_id", "agent_id", "agent_type"})
MAX_OUTCOMES = 512
MAX_PARKED = 256

# Codex's tool names (hooks report shell calls as Bash; the rollout's names for the same)
TOOL_KINDS = {
    "Bash": "shell",
    "exec_command": "shell",
    "shell": "shell",
    "local_shell": "shell",
    "write_stdin": "shell",
    "apply_patch": "edit",
    "Edit": "edit",
    "Write": "write",
    "view_image": "read",
    "read_file": "read",
    "list_dir": "search",
    "grep_files": "search",
    "web_search": "web",
    "spawn_agent": "agent",
    "send_input": "agent",
    "wait": "agent",
    "close_agent": "agent",
}


class Builder:
    """Turns one Codex session's spool entries into drafts (agents.protocols.SessionBuilder)."""

    def __init__(self, state: str | None = None, transcript: bool = True) -> None:
        s = jsoncore.loads(state) if state else {}
        self.transcript = transcript
        self.stats = ReadStats()  # this process's reading, for the logs only
        self.rollout: str | None = s.get("rollout")
        self.offset: int = int(s.get("offset", 0))
        self.outcomes: dict[str, rollout.Outcome] = {
            k: [v[0], v[1]] for k, v in dict(s.get("outcomes", {})).items()
        }
        self.parked: list[dict[str, Any]] = []  # each with its data, and its frame's `at`
        # parked results of an earlier dispatcher: frames to read back (`restore`)
        self.unread: list[tuple[str, int]] = [
            (str(x["at"][0]), int(x["at"][1]))
            for x in s.get("parked", [])
            if isinstance(x, dict) and isinstance(x.get("at"), list) and len(x["at"]) == 2
        ]
        self.at: tuple[str, int] | None = None  # the spool frame being built (the dispatcher's)
        self.usage = rollout.TurnUsage(s.get("usage"))  # each turn's tokens, from the rollout

    def state(self) -> str:
        """Content-free (the module docstring): ids, offsets, exit codes, frames."""
        held = [
            {"id": p["data"]["tool_use_id"], "at": list(p["at"])} for p in self.parked if p["at"]
        ]
        held += [{"at": list(at)} for at in self.unread]
        return jsoncore.dumps(
            {
                "rollout": self.rollout,
                "offset": self.offset,
                "outcomes": self.outcomes,
                "parked": held,
                "usage": self.usage.dump(),
            }
        )

    def held(self) -> set[str]:
        """The spool segments holding a parked result's frame (kept by the dispatcher)."""
        return {p["at"][0] for p in self.parked if p["at"]} | {at[0] for at in self.unread}

    def restore(self, load: Callable[[str, int], tuple[str, dict[str, Any], int] | None]) -> int:
        """Park again the results an earlier dispatcher parked, built from their frames
        (`load`: (event, payload, ts_ns) of the frame at (segment, offset), None when it
        is gone); returns how many could not be read back."""
        missing = 0
        for at in self.unread:
            got = load(*at)
            if got is None:
                missing += 1
                continue
            event, payload, ts_ns = got
            event = event_of(payload) or event
            self.at = at
            self._park(_result_data(payload), self._drafts(event, payload, ts_ns))
        self.unread, self.at = [], None
        return missing

    def build(
        self, event: str, payload: dict[str, Any], ts_ns: int, transcript_size: int = -1
    ) -> list[Draft]:
        handler = HANDLERS.get(event)
        if handler is None:
            return []
        drafts = self._drafts(event, payload, ts_ns)
        path = payload.get("transcript_path")
        if self.transcript and isinstance(path, str) and path:
            if event == "SessionStart" and self.rollout != path and transcript_size >= 0:
                # a new process of the session: what came before was built already
                self.rollout, self.offset = path, transcript_size
            guarded(payload, self.stats, lambda: self._sync(path), None)
        out = self._release(final=False)
        out.extend(handler(self, payload, drafts))
        return out

    def _drafts(self, event: str, payload: dict[str, Any], ts_ns: int) -> Drafts:
        aid, kind = subagent_of(payload)
        turn = payload.get("turn_id")
        return Drafts(
            NAME,
            event,
            event_time(None, ts_ns),
            aid,
            kind,
            turn if isinstance(turn, str) and turn else None,
        )

    # --- the rollout ----------------------------------------------------------------

    def _sync(self, path: str) -> None:
        if self.rollout != path:
            self.rollout, self.offset = path, 0
        found, self.offset = rollout.scan(path, self.offset, self.stats, self.usage)
        if found:
            self.outcomes.update(found)
            if len(self.outcomes) > MAX_OUTCOMES:
                keep = list(self.outcomes)[-MAX_OUTCOMES:]
                self.outcomes = {k: self.outcomes[k] for k in keep}

    def _outcome(self, call_id: Any, path: Any) -> rollout.Outcome | None:
        if not isinstance(call_id, str):
            return None
        if call_id in self.outcomes:
            return self.outcomes[call_id]
        if not self.transcript and isinstance(path, str) and path:
            return rollout.find_outcome(path, call_id)
        return None

    def _release(self, final: bool) -> list[Draft]:
        """Parked results the rollout now resolves (all of them when `final`)."""
        out, kept = [], []
        for p in self.parked:
            outcome = self.outcomes.get(p["data"]["tool_use_id"])
            if outcome is None and not final:
                kept.append(p)
                continue
            data = _finish(p["data"], outcome)
            out.append(
                Draft(
                    "tool_result", p["event"], p["ts"], data, p["aid"], p["kind"], p["turn"], NAME
                )
            )
        self.parked = kept
        return out

    # --- one method per hook event ----------------------------------------------------

    def user_prompt_submit(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return [drafts("user_prompt", {"prompt": p.get("prompt"), "extra": _extra(p, {"prompt"})})]

    def pre_tool_use(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        data = tool_data(p.get("tool_name"), p.get("tool_use_id"), p.get("tool_input"), TOOL_KINDS)
        data["input"] = p.get("tool_input")
        data["extra"] = _extra(p, {"tool_name", "tool_use_id", "tool_input"})
        return [drafts("tool_call", data)]

    def post_tool_use(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        data = _result_data(p)
        path = p.get("transcript_path")
        outcome = self._outcome(p.get("tool_use_id"), path)
        readable = self.transcript and isinstance(path, str) and bool(path)
        wait = outcome is None and readable and data["tool_kind"] == "shell"
        if wait and self._park(data, drafts):
            return []
        return [drafts("tool_result", _finish(data, outcome))]

    def _park(self, data: dict[str, Any], drafts: Drafts) -> bool:
        """Hold a result until the rollout says how it ended (False: too many, or no
        call id). Only one with its spool frame (`at`) outlives this process."""
        if len(self.parked) >= MAX_PARKED or not isinstance(data["tool_use_id"], str):
            return False
        self.parked.append(
            {
                "data": data,
                "event": drafts.event,
                "ts": drafts.timestamp,
                "aid": drafts.agent_id,
                "kind": drafts.agent_type,
                "turn": drafts.prompt_id,
                "at": self.at,
            }
        )
        return True

    def stop(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        out = self._release(final=True)
        text = text_or_empty(p.get("last_assistant_message"))
        data: dict[str, Any] = {"text": text}
        model, usage = p.get("model"), self.usage.take(p.get("turn_id"))
        if isinstance(model, str) and model:
            data["model"] = model
        if usage:  # the turn's model calls, from the rollout (priced by the dispatcher)
            data["usage"] = usage
        data["extra"] = _extra(p, {"last_assistant_message", *data})
        out.append(drafts("assistant_response", data))
        return out

    def subagent_start(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        data = {"phase": "start", "agent_id": p.get("agent_id"), "agent_type": p.get("agent_type")}
        data["extra"] = _extra(p, set())
        return [drafts("subagent", data)]

    def subagent_stop(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        out = self._release(final=True)
        extra_ = _extra(p, {"last_assistant_message"})
        data = {"phase": "stop", "agent_id": p.get("agent_id"), "agent_type": p.get("agent_type")}
        out.append(drafts("subagent", {**data, "extra": extra_}))
        text = text_or_empty(p.get("last_assistant_message"))
        out.append(drafts("assistant_response", {"text": text, "extra": extra_}))
        return out

    def session_start(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return [drafts("session_start", building.session_start(p, _extra))]

    def session_end(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return [*self._release(final=True), drafts("session_end", building.session_end(p, _extra))]

    def pre_compact(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return [drafts("compaction", building.compaction(p, _extra))]

    def post_compact(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return [drafts("compaction", building.compaction(p, _extra, "after"))]


def _extra(p: dict[str, Any], used: set[str]) -> dict[str, Any]:
    return extra(p, used, COMMON)


def _result_data(p: dict[str, Any]) -> dict[str, Any]:
    """A PostToolUse's tool_result data, before its outcome is known."""
    data = tool_data(p.get("tool_name"), p.get("tool_use_id"), p.get("tool_input"), TOOL_KINDS)
    data["output"] = p.get("tool_response")
    data["extra"] = _extra(p, {"tool_name", "tool_use_id", "tool_response"})
    return data


def _finish(data: dict[str, Any], outcome: rollout.Outcome | None) -> dict[str, Any]:
    """A tool_result's status (and, for a failure, `exit_code` and `error`)."""
    data = dict(data)
    if outcome is not None and isinstance(outcome[0], int):
        data["exit_code"] = outcome[0]
    if outcome is not None and rollout.failed(outcome):
        data["status"] = "failure"
        code = outcome[0]
        head = f"Exit code {code}" if isinstance(code, int) else f"Tool call {outcome[1]}"
        text = data.get("output")
        data["error"] = head + ("\n" + text.rstrip("\n") if isinstance(text, str) and text else "")
    else:
        data["status"] = "success"
    return data


# hook event -> its handler: the only events the builder knows
HANDLERS: dict[str, Callable[[Builder, dict[str, Any], Drafts], list[Draft]]] = {
    "UserPromptSubmit": Builder.user_prompt_submit,
    "PreToolUse": Builder.pre_tool_use,
    "PostToolUse": Builder.post_tool_use,
    "Stop": Builder.stop,
    "SubagentStart": Builder.subagent_start,
    "SubagentStop": Builder.subagent_stop,
    "SessionStart": Builder.session_start,
    "SessionEnd": Builder.session_end,
    "PreCompact": Builder.pre_compact,
    "PostCompact": Builder.post_compact,
}
