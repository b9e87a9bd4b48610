"""`text`: one readable line per record: time, #rule_seq, section, agent, a summary.

For people reading a file with `tail -f`, not for machines: the summary is cut at 2,000
characters and the record's other fields are left out, and line breaks inside it are
written as `\\r` and `\\n` so one record stays one line.
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

from ..utf8 import ERRORS

MEDIA_TYPE: Final = "text/plain; charset=utf-8"
BATCH: Final[Literal["array", "lines"]] = "lines"


def text_line(record: dict[str, Any]) -> str:
    data = record.get("data") or {}
    section = record.get("section", "")
    if section == "checkpoint":  # evidence/: outside the chain; the signed note is the proof
        line = (
            f"{record.get('timestamp')} checkpoint up to #{record.get('last_rule_seq')} "
            f"{record.get('checkpoint', '')}"
        )
        return line.replace("\r", "\\r").replace("\n", "\\n")
    if section in ("tool_call", "tool_result"):
        detail = (
            data.get("input")
            if section == "tool_call"
            else (data.get("output") if data.get("status") == "success" else data.get("error"))
        )
        summary = f"{data.get('tool_name')} {data.get('status', '')} ".replace("  ", " ")
        summary += json.dumps(detail, ensure_ascii=False, default=str)[:2000]
    elif section in ("user_prompt", "assistant_response", "queued_message"):
        summary = str(data.get("prompt") or data.get("text") or "")[:2000]
    else:
        summary = json.dumps(
            {k: v for k, v in data.items() if k != "extra"}, ensure_ascii=False, default=str
        )
    agent = record.get("agent_type", "")
    if record.get("agent_id"):
        agent += f"({record['agent_id']})"
    line = f"{record.get('timestamp')} #{record.get('rule_seq')} {section} {agent} {summary}"
    return line.replace("\r", "\\r").replace("\n", "\\n")


def encode(record: dict[str, Any], line: bytes) -> bytes:
    return text_line(record).encode("utf-8", ERRORS)
