"""Permission requests and decisions: the `permission` section's data, from hook payloads
and from the transcript.

Claude Code 2.1.332 says who allowed a tool call in the transcript: the `user` line
carrying a call's `tool_result` also carries `permissionDecision`, e.g.

    {"decision": "accept", "source": "config", "reasonType": "rule", "ruleSource": "cliArg"}
    {"decision": "accept", "source": "user_temporary", "grantScope": "once", ...}
    {"decision": "reject", "source": "config", "reasonCode": "workingDir"}

so a decision is exported when the transcript holds it (the main transcript at each
read, a subagent's file at its SubagentStop), once per `tool_use_id`. A
`PermissionRequest` (a prompt is about to show; no `tool_use_id` in its payload) is
joined to the call by the latest `PreToolUse` of the same agent, tool and input. A
`PermissionDenied` (auto mode's classifier) is a decision of its own.

`decision` is one of DECISIONS: `allowed_by_rule` (source `config`: an allow rule or
the permission mode), `allowed_by_user` (a `user_*` source: the person answered the
prompt), `allowed` (any other source, such as a hook or a classifier, named in
`source`), `denied`. `mode` is the permission mode the call ran under, `detail` the
client's own object, verbatim.
"""

from __future__ import annotations

from ... import jsoncore
from ...sha import sha256_hex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DECISIONS = ("allowed_by_rule", "allowed_by_user", "allowed", "denied")
_ACCEPT = ("accept", "allow", "approve")
_REJECT = ("reject", "deny", "denied")


_KEY_JSON = jsoncore.Encoder(sort_keys=True, default=str)  # json.dumps' own, made once


def call_key(tool_name: Any, tool_input: Any, agent_id: Any) -> str:
    """What joins a PermissionRequest to its PreToolUse: agent, tool and input."""
    try:
        text = _KEY_JSON.encode([agent_id, tool_name, tool_input])
    except (ValueError, RecursionError):
        text = repr((agent_id, tool_name))
    return sha256_hex(text.encode("utf-8", "surrogatepass"))[:24]


class Unkeyed:
    """A remembered call's (tool, input, agent) until its key is needed (tracker.py:
    compared or saved); never saved itself (json refuses it). The input is the
    payload's own object, which nothing changes."""

    __slots__ = ("agent_id", "name", "tool_input")

    def __init__(self, name: Any, tool_input: Any, agent_id: Any) -> None:
        self.name, self.tool_input, self.agent_id = name, tool_input, agent_id

    def key(self) -> str:
        return call_key(self.name, self.tool_input, self.agent_id)


def decision_of(detail: dict[str, Any]) -> str | None:
    """The DECISIONS value of a transcript `permissionDecision`; None if unreadable."""
    verdict = detail.get("decision")
    source = detail.get("source")
    source = source if isinstance(source, str) else ""
    if verdict in _REJECT:
        return "denied"
    if verdict not in _ACCEPT:
        return None
    if source.startswith("user"):
        return "allowed_by_user"
    return "allowed_by_rule" if source == "config" else "allowed"


def decision_data(
    detail: dict[str, Any], tool_use_id: str, tool_name: Any, mode: Any
) -> dict[str, Any] | None:
    decision = decision_of(detail)
    if decision is None:
        return None
    source = detail.get("source")
    return {
        "phase": "decision",
        "tool_name": tool_name,
        "tool_use_id": tool_use_id,
        "decision": decision,
        "source": source if isinstance(source, str) else None,
        "mode": mode,
        "detail": detail,
    }


def result_decisions(obj: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(tool_use_id, permissionDecision) of one transcript `user` line holding one
    tool result; [] for any other line."""
    detail = obj.get("permissionDecision")
    msg = obj.get("message")
    if not isinstance(detail, dict) or not isinstance(msg, dict):
        return []
    content = msg.get("content")
    if not isinstance(content, list):
        return []
    ids = [
        b.get("tool_use_id")
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    if len(ids) != 1 or not isinstance(ids[0], str):
        return []  # a decision that names no single call is not guessed at
    return [(ids[0], detail)]


def tool_uses(message: Any) -> list[tuple[str, Any, Any]]:
    """(id, name, input) of the `tool_use` blocks of an assistant line's message."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return []
    return [
        (b["id"], b.get("name"), b.get("input"))
        for b in message["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    ]
