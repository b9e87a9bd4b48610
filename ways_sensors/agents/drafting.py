"""What the builders of Codex, Gemini CLI, Cursor and Copilot CLI share: making one event's drafts.

Each of those builders maps its agent's events to the same sections and data fields as
Claude Code's (SPEC section 5); this module holds the plumbing they share, so each
builder reads as its event table and the recoveries its agent needs:

* `Drafts`, one event's draft factory: the section, the record time, the agent's name,
  the subagent (`agent_id`/`agent_type`) and `prompt_id`, set once per event;
* `extra`, the payload fields a handler did not use, kept whole under `data.extra`;
* `event_time`, the record's time: the agent's own `timestamp` when its payload carries
  one (Gemini CLI: ISO 8601; Copilot CLI: ISO 8601 or milliseconds), else the hook's
  clock;
* `tool_data`, the fields of tool_call and tool_result records (tool_kinds.py adds the
  cross-agent `tool_kind` and `command`);
* `event_of`, the event a parsed payload names: every adapter's `event_of`, Claude
  Code's included (all five agents put it in `hook_event_name`).
"""

from __future__ import annotations

from ..records import Draft
from ..state.events import iso_utc
from . import tool_kinds

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def event_of(payload: Mapping[str, Any]) -> str | None:
    """The payload's `hook_event_name`, when it is a non-empty string."""
    event = payload.get("hook_event_name")
    return event if isinstance(event, str) and event else None


def event_time(value: Any, ts_ns: int) -> str:
    """The payload's own timestamp in the record's form (UTC, milliseconds, `Z`), or the
    hook's clock when it has none that parses."""
    if isinstance(value, bool):
        return iso_utc(ts_ns)
    if isinstance(value, (int, float)) and 1e11 < value < 1e14:  # milliseconds since 1970
        return iso_utc(int(value) * 1_000_000)
    if isinstance(value, str) and len(value) >= 19:
        secs = utc_seconds(value[:19])
        if secs is None:
            return iso_utc(ts_ns)
        rest = value[19:]
        ms = 0
        if rest.startswith(".") and rest[1:4].isdigit():
            ms = int(rest[1:4].ljust(3, "0"))
            rest = rest[1:].lstrip("0123456789")
        if rest not in ("Z", "+00:00", ""):
            return iso_utc(ts_ns)  # an offset we would have to apply: the hook clock is plainer
        return iso_utc(secs * 1_000_000_000 + ms * 1_000_000)
    return iso_utc(ts_ns)


def utc_seconds(text: str) -> int | None:
    """Seconds since 1970 of `YYYY-MM-DDTHH:MM:SS` read as UTC: what
    calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%S")) gives in ASCII digits,
    None where strptime would refuse (a field out of range, a day its month lacks).
    Written out: strptime's import brings re, datetime, locale and calendar, which the
    blocking hook's path does without (bench/RESULTS.md, Blocking path cost)."""
    if len(text) != 19 or text[4] + text[7] + text[13] + text[16] != "--::" or text[10] not in "Tt":
        return None
    day = text[9] if text[8] == " " else text[8:10]  # strptime's %d takes " 5" too
    fields = (text[0:4], text[5:7], day, text[11:13], text[14:16], text[17:19])
    if not all(f.isascii() and f.isdigit() for f in fields):  # other digits: the hook's time
        return None
    y, mo, d, h, mi, sec = (int(f) for f in fields)
    if not (1 <= mo <= 12 and h <= 23 and mi <= 59 and sec <= 61):
        return None
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    if not 1 <= d <= (29 if mo == 2 and leap else _MONTH_DAYS[mo - 1]) or y < 1:
        return None
    # days from 1970-01-01 to y-mo-d, proleptic Gregorian (H. Hinnant's days_from_civil)
    yy = y - (mo <= 2)
    era = yy // 400
    yoe = yy - era * 400
    doy = (153 * (mo + (-3 if mo > 2 else 9)) + 2) // 5 + d - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    return days * 86400 + h * 3600 + mi * 60 + sec


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def extra(payload: Mapping[str, Any], used: set[str], common: frozenset[str]) -> dict[str, Any]:
    """The payload's fields that neither the envelope (`common`) nor the handler used."""
    return {k: v for k, v in payload.items() if k not in common and k not in used}


def tool_data(
    tool_name: Any, tool_use_id: Any, tool_input: Any, table: Mapping[str, str]
) -> dict[str, Any]:
    """`tool_name`, `tool_use_id`, `tool_kind` (and `command` for a shell tool); MCP
    tools also get `mcp_server` and `mcp_tool`."""
    data: dict[str, Any] = {"tool_name": tool_name, "tool_use_id": tool_use_id}
    if isinstance(tool_name, str):
        mcp = split_mcp(tool_name)
        if mcp:
            data["mcp_server"], data["mcp_tool"] = mcp
    data.update(tool_kinds.describe(tool_name, tool_input, table))
    return data


def split_mcp(tool_name: str) -> tuple[str, str] | None:
    """`mcp__server__tool` (Claude Code, Codex, Gemini CLI) or `MCP:server:tool` (Cursor)
    -> (server, tool)."""
    if tool_name.startswith("mcp__"):
        parts = tool_name.split("__", 2)
    elif tool_name.startswith("MCP:"):
        parts = tool_name.split(":", 2)
    else:
        return None
    if len(parts) < 3 or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


class Drafts:
    """One event's drafts: `drafts(section, data, **overrides)`."""

    def __init__(
        self,
        agent: str,
        event: str,
        timestamp: str,
        agent_id: str | None = None,
        agent_type: str = "main",
        prompt_id: str | None = None,
    ) -> None:
        self.agent = agent
        self.event = event
        self.timestamp = timestamp
        self.agent_id = agent_id
        self.agent_type = agent_type
        self.prompt_id = prompt_id

    def __call__(self, section: str, data: dict[str, Any], **overrides: Any) -> Draft:
        d = Draft(
            section,
            self.event,
            self.timestamp,
            data,
            self.agent_id,
            self.agent_type,
            self.prompt_id,
            self.agent,
        )
        for k, v in overrides.items():
            setattr(d, k, v)
        return d


def subagent_of(payload: Mapping[str, Any]) -> tuple[str | None, str]:
    """(agent_id, agent_type) of a payload: (None, "main") outside a subagent."""
    aid = payload.get("agent_id")
    if not isinstance(aid, str) or not aid:
        return None, "main"
    kind = payload.get("agent_type")
    return aid, kind if isinstance(kind, str) and kind else "internal"


def text_or_empty(value: Any) -> str:
    return value if isinstance(value, str) else ""
