"""Cursor hook payloads to Drafts: one handler per event (the shapes of Cursor's hooks docs).

| Cursor event | section |
|---|---|
| beforeSubmitPrompt | user_prompt |
| preToolUse, beforeShellExecution, beforeMCPExecution, beforeReadFile | tool_call |
| postToolUse, afterShellExecution, afterMCPExecution, afterFileEdit | tool_result |
| postToolUseFailure | tool_result (failure) |
| afterAgentResponse | assistant_response (`text`) |
| subagentStart, subagentStop | subagent |
| preCompact | compaction (before) |
| sessionStart, sessionEnd | session_start, session_end |

`afterAgentThought` is thinking: never read. `stop` carries no reply: not read.
Cursor fires its generic tool events (preToolUse, postToolUse) and the specific ones
(beforeShellExecution ...) for the same call when both are hooked: pairing.Twins
records each call and each result once, whichever comes first. The specific events
carry no tool-call id: a specific result takes its generic call's id, else (the generic
events not hooked) calls get one from pairing.CallQueue. `generation_id`
(one prompt's run) is the record's `prompt_id`; MCP tool inputs and outputs, which
Cursor sends as JSON text, are parsed.
"""

from __future__ import annotations

from ... import jsoncore
from ...records import Draft
from ..drafting import Drafts, event_time, extra, text_or_empty, tool_data
from ..kit import building
from ..pairing import CallQueue, Twins, input_key
from . import NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

COMMON = frozenset({"hook_event_name", "conversation_id", "generation_id"})
MAX_IDS = 256

TOOL_KINDS = {
    "Shell": "shell",
    "Terminal": "shell",
    "Read": "read",
    "ReadFile": "read",
    "Write": "write",
    "Edit": "edit",
    "StrReplace": "edit",
    "MultiEdit": "edit",
    "Delete": "edit",
    "Grep": "search",
    "Glob": "search",
    "LS": "search",
    "SemanticSearch": "search",
    "codebase_search": "search",
    "WebSearch": "web",
    "WebFetch": "web",
    "Task": "agent",
}


def _json(value: Any) -> Any:
    """Cursor sends some inputs and outputs as JSON text: parsed when they parse."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return jsoncore.loads(value)
        except ValueError:
            return value
    return value


class Builder:
    """Turns one Cursor conversation's spool entries into drafts (SessionBuilder)."""

    def __init__(self, state: str | None = None, transcript: bool = True) -> None:
        s = jsoncore.loads(state) if state else {}
        self.calls = CallQueue.from_dict("cursor", s.get("calls"))
        self.twins = Twins.from_dict(s.get("twins"))
        self.ids: dict[str, str] = dict(s.get("ids", {}))  # call -> the generic event's id

    def state(self) -> str:
        return jsoncore.dumps(
            {"calls": self.calls.to_dict(), "twins": self.twins.to_dict(), "ids": self.ids}
        )

    def build(
        self, event: str, payload: dict[str, Any], ts_ns: int, transcript_size: int = -1
    ) -> list[Draft]:
        handler = HANDLERS.get(event)
        if handler is None:
            return []
        gen = payload.get("generation_id")
        gen = gen if isinstance(gen, str) and gen else None
        drafts = Drafts(NAME, event, event_time(payload.get("timestamp"), ts_ns), prompt_id=gen)
        return handler(self, payload, drafts)

    def _first(self, p: dict[str, Any], phase: str, name: Any, about: Any, generic: bool) -> bool:
        return self.twins.first(_key(p, phase, name, about), 0 if generic else 1)

    # --- generic tool events ------------------------------------------------------------

    def pre_tool_use(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        name, tool_input = p.get("tool_name"), _json(p.get("tool_input"))
        if isinstance(p.get("tool_use_id"), str):  # for a specific result recorded first
            self.ids[_key(p, "call", *_about(name, tool_input))] = p["tool_use_id"]
            if len(self.ids) > MAX_IDS:
                del self.ids[next(iter(self.ids))]
        if not self._first(p, "call", *_about(name, tool_input), generic=True):
            return []
        data = tool_data(name, p.get("tool_use_id"), tool_input, TOOL_KINDS)
        data["input"] = tool_input
        data["extra"] = _extra(p, {"tool_name", "tool_use_id", "tool_input"})
        return [drafts("tool_call", data)]

    def post_tool_use(self, p: dict[str, Any], drafts: Drafts, failed: bool = False) -> list[Draft]:
        name, tool_input = p.get("tool_name"), _json(p.get("tool_input"))
        if not self._first(p, "result", *_about(name, tool_input), generic=True):
            return []
        data = tool_data(name, p.get("tool_use_id"), tool_input, TOOL_KINDS)
        if failed:
            err = p.get("error_message", p.get("error"))
            data["status"] = "failure"
            data["error"] = err if isinstance(err, str) else jsoncore.dumps(err)
            used = {"tool_name", "tool_use_id", "error_message", "error"}
        else:
            data["status"] = "success"
            data["output"] = _json(p.get("tool_output"))
            used = {"tool_name", "tool_use_id", "tool_output"}
        data["extra"] = _extra(p, used)
        return [drafts("tool_result", data)]

    def post_tool_use_failure(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return self.post_tool_use(p, drafts, failed=True)

    # --- specific tool events -------------------------------------------------------------

    def _specific_call(
        self, p: dict[str, Any], drafts: Drafts, name: Any, tool_input: Any, used: set[str]
    ) -> list[Draft]:
        if not self._first(p, "call", *_about(name, tool_input), generic=False):
            return []
        data = tool_data(name, self.calls.call(name, tool_input), tool_input, TOOL_KINDS)
        data["input"] = tool_input
        data["extra"] = _extra(p, used)
        return [drafts("tool_call", data)]

    def _specific_result(
        self,
        p: dict[str, Any],
        drafts: Drafts,
        name: Any,
        tool_input: Any,
        output: Any,
        used: set[str],
    ) -> list[Draft]:
        if not self._first(p, "result", *_about(name, tool_input), generic=False):
            return []
        tid = self.ids.pop(_key(p, "call", *_about(name, tool_input)), None)
        if tid is None:
            tid = self.calls.result(name, tool_input)
        data = tool_data(name, tid, tool_input, TOOL_KINDS)
        data["status"] = "success"
        data["output"] = output
        data["extra"] = _extra(p, used)
        return [drafts("tool_result", data)]

    def before_shell(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return self._specific_call(p, drafts, "Shell", _shell_input(p), {"command", "cwd"})

    def after_shell(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        used = {"command", "cwd", "output"}
        return self._specific_result(p, drafts, "Shell", _shell_input(p), p.get("output"), used)

    def before_mcp(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        name, tool_input = p.get("tool_name"), _json(p.get("tool_input"))
        return self._specific_call(p, drafts, name, tool_input, {"tool_name", "tool_input"})

    def after_mcp(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        name, tool_input = p.get("tool_name"), _json(p.get("tool_input"))
        used = {"tool_name", "tool_input", "result_json"}
        return self._specific_result(p, drafts, name, tool_input, _json(p.get("result_json")), used)

    def before_read(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        tool_input = {"file_path": p.get("file_path")}
        return self._specific_call(p, drafts, "Read", tool_input, {"file_path"})

    def after_edit(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        tool_input = {"file_path": p.get("file_path"), "edits": p.get("edits")}
        if not self._first(p, "result", *_about("Edit", tool_input), generic=False):
            return []
        data = tool_data("Edit", self.calls.call("Edit", tool_input), tool_input, TOOL_KINDS)
        data.update(status="success", input=tool_input, output=None)
        data["extra"] = _extra(p, {"file_path", "edits"})
        return [drafts("tool_result", data)]

    # --- the rest -----------------------------------------------------------------------

    def before_submit_prompt(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        self.calls.new_turn(p.get("generation_id") or drafts.timestamp)
        return [drafts("user_prompt", {"prompt": p.get("prompt"), "extra": _extra(p, {"prompt"})})]

    def after_agent_response(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        text = text_or_empty(p.get("text"))
        return [drafts("assistant_response", {"text": text, "extra": _extra(p, {"text"})})]

    def _subagent(self, p: dict[str, Any], drafts: Drafts, phase: str) -> list[Draft]:
        aid = p.get("subagent_id", p.get("agent_id"))
        kind = p.get("subagent_type", p.get("agent_type"))
        used = {"subagent_id", "agent_id", "subagent_type", "agent_type"}
        data = {"phase": phase, "agent_id": aid, "agent_type": kind, "extra": _extra(p, used)}
        return [drafts("subagent", data)]

    def subagent_start(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return self._subagent(p, drafts, "start")

    def subagent_stop(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return self._subagent(p, drafts, "stop")

    def pre_compact(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return [drafts("compaction", building.compaction(p, _extra))]

    def session_start(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return [drafts("session_start", building.session_start(p, _extra))]

    def session_end(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return [drafts("session_end", building.session_end(p, _extra))]


def _extra(p: dict[str, Any], used: set[str]) -> dict[str, Any]:
    return extra(p, used, COMMON)


def _key(p: dict[str, Any], phase: str, name: str, about: Any) -> str:
    return input_key([p.get("generation_id"), phase, name], about)


def _shell_input(p: dict[str, Any]) -> dict[str, Any]:
    return {"command": p.get("command"), "cwd": p.get("cwd")}


def _about(name: Any, tool_input: Any) -> tuple[str, Any]:
    """What the generic and the specific event of one call have in common: the kind of
    tool and its command or file (the generic input may hold more fields)."""
    kind = {"Shell": "shell", "Terminal": "shell", "Read": "read", "ReadFile": "read"}.get(
        str(name), "edit" if name in ("Write", "Edit", "StrReplace", "MultiEdit") else str(name)
    )
    if isinstance(tool_input, dict):
        for key in ("command", "file_path", "path", "target_file"):
            if isinstance(tool_input.get(key), str):
                return kind, tool_input[key]
    return kind, tool_input


# hook event -> its handler: the only events the builder knows
HANDLERS: dict[str, Callable[[Builder, dict[str, Any], Drafts], list[Draft]]] = {
    "sessionStart": Builder.session_start,
    "sessionEnd": Builder.session_end,
    "beforeSubmitPrompt": Builder.before_submit_prompt,
    "preToolUse": Builder.pre_tool_use,
    "postToolUse": Builder.post_tool_use,
    "postToolUseFailure": Builder.post_tool_use_failure,
    "beforeShellExecution": Builder.before_shell,
    "afterShellExecution": Builder.after_shell,
    "beforeMCPExecution": Builder.before_mcp,
    "afterMCPExecution": Builder.after_mcp,
    "beforeReadFile": Builder.before_read,
    "afterFileEdit": Builder.after_edit,
    "afterAgentResponse": Builder.after_agent_response,
    "subagentStart": Builder.subagent_start,
    "subagentStop": Builder.subagent_stop,
    "preCompact": Builder.pre_compact,
}
