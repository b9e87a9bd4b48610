"""`ways sessions replay SID --html FILE`: a session as one self-contained HTML page.

The page loads nothing: its style is inline, it has no script, no image, no link, and a
Content-Security-Policy of `default-src 'none'` (inline style allowed) tells the
browser to refuse anything a record's text might smuggle in. Every string of the
session is escaped (html.escape), so a record holding markup shows it as text.

Each record is one `<li class="rec" data-section=... data-seq=...>`: its time, its
timeline line (services/sessions.py `describe`), and the record's JSON in a closed
`<details>`, cut at JSON_MAX characters (the cut says how much is left out: the whole
record is in the store and `ways sessions show --json`). A subagent's records are
indented under the call that started them (`depth-1`).
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from .sessions import describe

JSON_MAX = 64 * 1024
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'"
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;color:#1d1d1f}
header dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em}
dt{color:#666}ol{list-style:none;padding:0}
li.rec{border-left:3px solid #ccc;margin:.4em 0;padding:.2em .8em}
li.depth-1{margin-left:2.5em}
li[data-section=user_prompt]{border-color:#2f6fdb}
li[data-section=assistant_response]{border-color:#2e9e5b}
li[data-section=tool_call],li[data-section=tool_result]{border-color:#b07d12}
li[data-section=permission],li[data-section=error]{border-color:#c43c3c}
.when{color:#777;font-family:monospace}.label{font-weight:600;margin:0 .6em}
.text{white-space:pre-wrap}pre{white-space:pre-wrap;background:#f5f5f7;padding:.5em}
"""


def _json(record: dict[str, Any]) -> str:
    text = json.dumps(record, indent=2, ensure_ascii=False)
    if len(text) > JSON_MAX:
        text = text[:JSON_MAX] + f"\n… ({len(text) - JSON_MAX} more characters in the store)"
    return text


def _full_text(record: dict[str, Any]) -> str:
    """The record's main text whole (a prompt, a reply, a command, an output)."""
    data = record.get("data")
    data = data if isinstance(data, dict) else {}
    for key in ("prompt", "text", "command", "output", "error", "summary", "instructions"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value[:JSON_MAX]
    return ""


def page(head: dict[str, Any], records: list[dict[str, Any]]) -> str:
    sid = escape(str(head.get("session_id") or ""))
    cost = head.get("cost")
    facts = [
        ("agent", head.get("agent")),
        ("project", head.get("project")),
        ("start", head.get("first_ts")),
        ("last record", head.get("last_ts")),
        ("records", head.get("records")),
        ("prompts", head.get("prompts")),
        ("tool calls", head.get("tools")),
        ("cost", f"${cost:.4f}" if isinstance(cost, (int, float)) else "not priced"),
        ("ended", head.get("outcome") or "not ended"),
        ("imported", "yes" if head.get("imported") else "no"),
    ]
    out = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>session {sid}</title><style>{STYLE}</style></head><body>",
        f'<header><h1>Session <span id="sid">{sid}</span></h1><dl>',
    ]
    for name, value in facts:
        out.append(f"<dt>{escape(name)}</dt><dd>{escape(str(value or ''))}</dd>")
    out.append('</dl></header><main><ol class="timeline">')
    for record in records:
        line = describe(record)
        section = escape(str(record.get("section") or ""))
        seq = record.get("seq")
        full = _full_text(record)
        out.append(
            f'<li class="rec depth-{line.depth}" data-section="{section}" '
            f'data-seq="{escape(str(seq if seq is not None else ""))}">'
            f'<span class="when">{escape(line.timestamp)}</span>'
            f'<span class="label">{escape(line.label)}</span>'
            f'<div class="text">{escape(full or line.text)}</div>'
            f"<details><summary>record</summary><pre>{escape(_json(record))}</pre></details>"
            "</li>"
        )
    out.append("</ol></main></body></html>\n")
    return "\n".join(out)
