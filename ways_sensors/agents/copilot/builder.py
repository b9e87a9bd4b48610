"""GitHub Copilot CLI hook payloads to Drafts (the shapes of its CLI hooks reference).

Both dialects are read: a camelCase payload (`sessionId`, `toolName`, `toolArgs`,
`toolResult {resultType, textResultForLlm}` ...) is first renamed to the snake_case
one (CAMEL), and its camelCase event name to the PascalCase one (EVENTS). Then:

| Copilot CLI event | section |
|---|---|
| UserPromptSubmit (userPromptSubmitted) | user_prompt |
| PreToolUse | tool_call |
| PostToolUse | tool_result: `failure` unless `tool_result.result_type` is success |
| PostToolUseFailure | tool_result (failure) |
| subagentStart, SubagentStop | subagent (`agent_type` is the agent's name) |
| PreCompact | compaction (before) |
| SessionStart, SessionEnd | session_start, session_end |

Copilot CLI gives tool calls no id: pairing.CallQueue pairs them by order within a
turn. A failure reported by both PostToolUse and PostToolUseFailure is recorded once
(pairing.Twins). Stop carries no reply text, and the session file's format is not
documented, so Copilot CLI sessions have no assistant_response records.
"""

from __future__ import annotations

from ... import jsoncore
from ...records import Draft
from ..drafting import Drafts, event_time, extra, tool_data
from ..kit import building
from ..pairing import CallQueue, Twins, input_key
from . import NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

COMMON = frozenset({"session_id", "hook_event_name", "timestamp"})

# camelCase event -> the PascalCase name the builder's table uses
EVENTS = {
    "sessionStart": "SessionStart",
    "sessionEnd": "SessionEnd",
    "userPromptSubmitted": "UserPromptSubmit",
    "preToolUse": "PreToolUse",
    "postToolUse": "PostToolUse",
    "postToolUseFailure": "PostToolUseFailure",
    "subagentStart": "SubagentStart",
    "subagentStop": "SubagentStop",
    "preCompact": "PreCompact",
}
# camelCase payload field -> snake_case
CAMEL = {
    "sessionId": "session_id",
    "transcriptPath": "transcript_path",
    "toolName": "tool_name",
    "toolArgs": "tool_input",
    "toolResult": "tool_result",
    "resultType": "result_type",
    "textResultForLlm": "text_result_for_llm",
    "initialPrompt": "initial_prompt",
    "stopReason": "stop_reason",
    "agentName": "agent_name",
    "agentDisplayName": "agent_display_name",
    "agentDescription": "agent_description",
    "customInstructions": "custom_instructions",
    "errorContext": "error_context",
}
TOOL_KINDS = {
    "bash": "shell",
    "powershell": "shell",
    "shell": "shell",
    "view": "read",
    "create": "write",
    "edit": "edit",
    "str_replace": "edit",
    "glob": "search",
    "grep": "search",
    "web_fetch": "web",
    "task": "agent",
}


def snake(payload: dict[str, Any]) -> dict[str, Any]:
    """A camelCase payload in the snake_case dialect (nested tool results too)."""
    out = {CAMEL.get(k, k): v for k, v in payload.items()}
    result = out.get("tool_result")
    if isinstance(result, dict):
        out["tool_result"] = {CAMEL.get(k, k): v for k, v in result.items()}
    return out


class Builder:
    """Turns one Copilot CLI session's spool entries into drafts (SessionBuilder)."""

    def __init__(self, state: str | None = None, transcript: bool = True) -> None:
        s = jsoncore.loads(state) if state else {}
        self.calls = CallQueue.from_dict("copilot", s.get("calls"))
        self.twins = Twins.from_dict(s.get("twins"))

    def state(self) -> str:
        return jsoncore.dumps({"calls": self.calls.to_dict(), "twins": self.twins.to_dict()})

    def build(
        self, event: str, payload: dict[str, Any], ts_ns: int, transcript_size: int = -1
    ) -> list[Draft]:
        event = EVENTS.get(event, event)
        handler = HANDLERS.get(event)
        if handler is None:
            return []
        p = snake(payload)
        drafts = Drafts(NAME, event, event_time(p.get("timestamp"), ts_ns))
        return handler(self, p, drafts)

    def user_prompt_submit(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        self.calls.new_turn(drafts.timestamp)
        return [drafts("user_prompt", {"prompt": p.get("prompt"), "extra": _extra(p, {"prompt"})})]

    def pre_tool_use(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        name, tool_input = p.get("tool_name"), p.get("tool_input")
        data = tool_data(name, self.calls.call(name, tool_input), tool_input, TOOL_KINDS)
        data["input"] = tool_input
        data["extra"] = _extra(p, {"tool_name", "tool_input"})
        return [drafts("tool_call", data)]

    def post_tool_use(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        result = _result if isinstance(_result := p.get("tool_result"), dict) else {}
        kind = result.get("result_type")
        if kind in (None, "success"):
            return self._result(p, drafts, None, result)
        text = result.get("text_result_for_llm")
        return self._result(p, drafts, text if isinstance(text, str) else str(kind), result)

    def post_tool_use_failure(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        err = p.get("error")
        return self._result(p, drafts, err if isinstance(err, str) else jsoncore.dumps(err), None)

    def _result(
        self, p: dict[str, Any], drafts: Drafts, error: str | None, result: dict[str, Any] | None
    ) -> list[Draft]:
        name, tool_input = p.get("tool_name"), p.get("tool_input")
        if error is not None:  # a failure may come as both PostToolUse and ...Failure
            kind = 0 if drafts.event == "PostToolUse" else 1
            if not self.twins.first(input_key(name, tool_input), kind):
                return []
        data = tool_data(name, self.calls.result(name, tool_input), tool_input, TOOL_KINDS)
        data["status"] = "success" if error is None else "failure"
        if result is not None:
            data["output"] = result
        if error is not None:
            data["error"] = error
        data["extra"] = _extra(p, {"tool_name", "tool_result", "error"})
        return [drafts("tool_result", data)]

    def _subagent(self, p: dict[str, Any], drafts: Drafts, phase: str) -> list[Draft]:
        data = {"phase": phase, "agent_id": None, "agent_type": p.get("agent_name")}
        return [drafts("subagent", {**data, "extra": _extra(p, {"agent_name"})})]

    def subagent_start(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return self._subagent(p, drafts, "start")

    def subagent_stop(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return self._subagent(p, drafts, "stop")

    def pre_compact(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return [drafts("compaction", building.compaction(p, _extra))]

    def session_start(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return [drafts("session_start", building.session_start(p, _extra, model=False))]

    def session_end(self, p: dict[str, Any], drafts: Drafts) -> list[Draft]:
        return [drafts("session_end", building.session_end(p, _extra))]


def _extra(p: dict[str, Any], used: set[str]) -> dict[str, Any]:
    return extra(p, used, COMMON)


# hook event (PascalCase) -> its handler: the only events the builder knows
HANDLERS: dict[str, Callable[[Builder, dict[str, Any], Drafts], list[Draft]]] = {
    "SessionStart": Builder.session_start,
    "SessionEnd": Builder.session_end,
    "UserPromptSubmit": Builder.user_prompt_submit,
    "PreToolUse": Builder.pre_tool_use,
    "PostToolUse": Builder.post_tool_use,
    "PostToolUseFailure": Builder.post_tool_use_failure,
    "SubagentStart": Builder.subagent_start,
    "SubagentStop": Builder.subagent_stop,
    "PreCompact": Builder.pre_compact,
}
