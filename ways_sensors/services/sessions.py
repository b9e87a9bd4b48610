"""What `ways sessions`, its HTML replay and the MCP server share: opening the store
for reading, and one line of text per record of a timeline.

Reading never creates a store: a missing one is a NoStore (the command says how to
turn the store on), a file that is not a store of this schema an InvalidError. A
postgresql:// URL in place of a path reads the team store (store/postgres.py), through
the same Reader.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import InvalidError, WaysError
from ..store.query import Filters
from ..store.schema import strings

TURN_ON = "ways settings set ways.sensors.store.enabled true"
SUMMARY_MAX = 160
# a tool call's input field shown on its line, the first one present
INPUT_KEYS = ("command", "file_path", "path", "pattern", "url", "query", "prompt")


class NoStore(WaysError):
    """No session store at the path: nothing was stored yet."""


def open_store(path: str | None = None) -> sqlite3.Connection:
    """The store at `path` (default: the data root's), for reading."""
    import os

    from ..store import default_path, sqlite

    where = os.path.expanduser(path) if path else default_path()
    try:
        return sqlite.connect(where, create=False)
    except FileNotFoundError:
        raise NoStore(f"no session store at {where}", hint=f"turn it on: {TURN_ON}") from None
    except sqlite.StoreError as exc:
        raise InvalidError(f"{where}: {exc}") from None
    except sqlite.Busy:
        raise WaysError(f"{where} stayed locked by a writer; try again") from None


class Reader(Protocol):
    """What `ways sessions` asks a store (store/query.py's Local, store/pgquery.py's Team)."""

    def sessions(self, f: Filters, limit: int = 0) -> list[dict[str, Any]]: ...
    def session(self, sid: str) -> dict[str, Any] | None: ...
    def records(self, sid: str) -> list[dict[str, Any]]: ...
    def search(self, q: str, f: Filters, limit: int = 0) -> list[dict[str, Any]]: ...


def open_reader(store: str | None = None) -> Reader:
    """The store `--store` names (a path, a postgresql:// URL) or the data root's."""
    from ..store import postgres

    if not postgres.is_url(store):
        from ..store.query import Local

        return Local(open_store(store))
    from ..store.pgquery import Team

    try:
        import psycopg
    except ImportError:
        raise WaysError(
            "a postgresql:// store needs the postgres extra",
            hint="pip install 'ways-sensors[postgres]'",
        ) from None
    try:
        conn = postgres.connect(postgres.params(str(store)), create=False)
    except FileNotFoundError:
        raise NoStore(
            "no session store in that database yet",
            hint="a store rule with `store: {url: ...}` makes it at its first delivery",
        ) from None
    except postgres.StoreError as exc:
        raise InvalidError(str(exc)) from None
    except psycopg.Error as exc:
        raise WaysError(f"the team store cannot be reached: {_pg_reason(exc)}") from None
    return Team(conn)


def _pg_reason(exc: Exception) -> str:
    """psycopg's message names host and user, never the password (never in the URL)."""
    return " ".join(str(exc).split())[:300] or type(exc).__name__


@dataclass(frozen=True)
class Line:
    """One record of a timeline, for people: when, how deep (0 the main agent, 1 a
    subagent's), what it is and its text in one line."""

    timestamp: str
    depth: int
    label: str
    text: str


def _first_line(value: Any) -> str:
    text = value if isinstance(value, str) else ""
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_MAX else text[: SUMMARY_MAX - 1] + "…"


def _money(cost: Any) -> str:
    amount = cost.get("amount") if isinstance(cost, dict) else None
    return f"${amount:.4f}" if isinstance(amount, (int, float)) else ""


def _usage(data: dict[str, Any]) -> str:
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return ""
    tokens = [usage.get(k) for k in ("input_tokens", "output_tokens")]
    parts = []
    if all(isinstance(t, int) for t in tokens):
        parts.append(f"{tokens[0]} in / {tokens[1]} out tokens")
    money = _money(usage.get("cost"))
    if money:
        parts.append(money)
    return " (" + ", ".join(parts) + ")" if parts else ""


def describe(record: dict[str, Any]) -> Line:
    """The timeline line of a record."""
    data = record.get("data")
    data = data if isinstance(data, dict) else {}
    section = str(record.get("section") or "")
    depth = 0 if record.get("agent_id") in (None, "") else 1
    label, text = section, ""
    if section == "user_prompt":
        label, text = "prompt", _first_line(data.get("prompt"))
    elif section == "queued_message":
        label, text = "queued", _first_line(data.get("text"))
    elif section == "assistant_response":
        label, text = "reply", _first_line(data.get("text")) + _usage(data)
    elif section == "tool_call":
        label = f"call {data.get('tool_name') or '?'}"
        inp = data.get("input")
        what = data.get("command")
        if not what and isinstance(inp, dict):
            what = next((inp[k] for k in INPUT_KEYS if isinstance(inp.get(k), str)), "")
        text = _first_line(what)
    elif section == "tool_result":
        label = f"result {data.get('tool_name') or '?'} {data.get('status') or ''}".strip()
        out = data.get("output") if data.get("status") != "failure" else data.get("error")
        text = _first_line(out if isinstance(out, str) else " ".join(strings(out, [])))
    elif section == "subagent":
        label = f"subagent {data.get('phase') or ''}".strip()
        text = str(data.get("agent_type") or record.get("agent_type") or "") + _usage(data)
    elif section == "permission":
        label = f"permission {data.get('phase') or ''}".strip()
        text = " ".join(str(data.get(k) or "") for k in ("tool_name", "decision")).strip()
    elif section == "compaction":
        label = f"compaction {data.get('phase') or ''}".strip()
        text = _first_line(data.get("instructions") or data.get("summary") or data.get("trigger"))
    elif section == "session_start":
        text = " ".join(str(data.get(k) or "") for k in ("source", "model")).strip()
    elif section == "session_end":
        text = (str(data.get("reason") or "") + " " + _money(data.get("cost"))).strip()
    elif section in ("notification", "error"):
        text = _first_line(data.get("message") or data.get("text") or data.get("error"))
    return Line(str(record.get("timestamp") or ""), depth, label, text)
