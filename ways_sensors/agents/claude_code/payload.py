"""What a Claude Code hook payload gives every record: the fields a section does not
name go under `data.extra` (never the envelope's), a tool's name, id and kind."""

from __future__ import annotations

from .. import tool_kinds
from ..drafting import split_mcp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# the envelope's fields: never repeated under data.extra
COMMON = frozenset({"session_id", "hook_event_name", "prompt_id", "agent_id", "agent_type"})


def extra_of(payload: dict[str, Any], used: set[str]) -> dict[str, Any]:
    extra = {k: v for k, v in payload.items() if k not in COMMON and k not in used}
    if "agent_type" in payload and not payload.get("agent_id"):
        extra["agent_type"] = payload["agent_type"]  # --agent sessions: still the main agent
    return extra


def tool_data(p: dict[str, Any]) -> dict[str, Any]:
    name = p.get("tool_name")
    data: dict[str, Any] = {"tool_name": name, "tool_use_id": p.get("tool_use_id")}
    mcp = split_mcp(name) if isinstance(name, str) else None
    if mcp:
        data["mcp_server"], data["mcp_tool"] = mcp
    data.update(tool_kinds.describe(name, p.get("tool_input"), tool_kinds.CLAUDE_CODE))
    return data
