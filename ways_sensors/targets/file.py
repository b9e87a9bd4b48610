"""The `file` target: append one line per record; placeholders in the path.

`{session_id}`, `{date}` (the record's UTC date), `{sensor}`, `{rule}`; `~` expands to
the home folder. Missing folders are created 0700 and new files 0600, since they hold
session content. A line is written with one `write()` on an O_APPEND descriptor, so
concurrent writers (several sessions, the blocking path) never interleave.
`format: text` writes one readable line: time, section, agent, and a summary.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from . import DELIVERED, ERROR, TIMEOUT, Outcome


def expand(path: str, ctx: dict[str, str]) -> str:
    out = path
    for key in ("session_id", "date", "sensor", "rule"):
        out = out.replace("{" + key + "}", ctx.get(key, ""))
    return os.path.expanduser(out)


def text_line(record: dict[str, Any]) -> str:
    data = record.get("data") or {}
    section = record.get("section", "")
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


def deliver(spec, record, line: bytes, ctx, deadline: float) -> Outcome:
    if time.monotonic() >= deadline:
        return Outcome(TIMEOUT, "deadline passed before the write")
    path = expand(spec.path, ctx)
    data = (
        text_line(record).encode("utf-8", "surrogatepass") if spec.format == "text" else line
    ) + b"\n"
    try:
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    except OSError as exc:
        return Outcome(ERROR, type(exc).__name__)
    return Outcome(DELIVERED)
