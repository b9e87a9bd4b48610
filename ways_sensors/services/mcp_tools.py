"""The tools `ways mcp` serves from the session store, for the agent itself.

    search_history     records holding a text (store/query.py's search), best first
    session_timeline   one session's records as timeline lines (services/sessions.py)
    get_record         one record whole, as delivered (masked)
    verify_record      a record with its proof: the JSON lines `ways sensors verify
                       FILE --key ROOTKEY` accepts (store/proof.py)

Every answer is JSON text, at most ANSWER_MAX characters (a longer one is cut and says
so); the store is opened for each call, so one made after the server started is read.
What the store holds was masked before it was stored: an answer never holds a value
masking removed.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import WaysError
from ..store import query
from .mcp_stdio import BadParams, Tool
from .sessions import describe, open_store

ANSWER_MAX = 100_000
PROOF_MAX = 8 << 20  # a proof is never cut: a longer one is refused
LIMIT_MAX = 200
FILTERS = ("agent", "section", "tool", "tool_kind", "project", "session", "since", "until")


def _schema(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


STR = {"type": "string"}
SEARCH = {
    "name": "search_history",
    "description": "Search past coding-agent sessions recorded by ways (prompts, replies, "
    "shell commands, file paths, tool output) for a substring, case-insensitive. Returns "
    "matching records, best first, with session id, time, agent, section and the text "
    "around the match.",
    "inputSchema": _schema(
        {
            "query": {"type": "string", "description": "the text to find (a substring)"},
            **{name: STR for name in FILTERS},
            "limit": {"type": "integer", "minimum": 1, "maximum": LIMIT_MAX},
        },
        ["query"],
    ),
}
TIMELINE = {
    "name": "session_timeline",
    "description": "The timeline of one recorded session: prompts, tool calls and results, "
    "subagents, replies, one line each.",
    "inputSchema": _schema({"session_id": STR}, ["session_id"]),
}
RECORD = {
    "name": "get_record",
    "description": "One record of a session, whole, as ways delivered it (secrets masked).",
    "inputSchema": _schema(
        {"session_id": STR, "seq": {"type": "integer", "minimum": 1}}, ["session_id", "seq"]
    ),
}


def _text(value: Any, most: int = ANSWER_MAX) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > most:
        text = text[:most] + f" … ({len(text) - most} more characters cut)"
    return text


def _str(args: dict[str, Any], name: str, required: bool = False) -> str | None:
    value = args.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise BadParams(f"{name} must be a non-empty string")
    return value


def _guarded(answer: Any, store: str | None, most: int = ANSWER_MAX) -> Any:
    """A tool on the store at `store`, whose store failure (none yet, not a store) is an
    error result."""

    def call(args: dict[str, Any]) -> tuple[str, bool]:
        try:
            return _text(answer(open_store(store), args), most), False
        except WaysError as exc:
            return exc.message + (f"; {exc.hint}" if exc.hint else ""), True

    return call


def search(conn: Any, args: dict[str, Any]) -> Any:
    q = _str(args, "query", True)
    limit = args.get("limit", 20)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= LIMIT_MAX:
        raise BadParams(f"limit must be an integer from 1 to {LIMIT_MAX}")
    given: dict[str, Any] = {name: _str(args, name) for name in FILTERS}
    f = query.Filters(**given)
    return query.search(conn, str(q), f, limit)


def timeline(conn: Any, args: dict[str, Any]) -> Any:
    sid = str(_str(args, "session_id", True))
    head = query.session(conn, sid)
    if head is None:
        raise WaysError(f"no session {sid} in the store")
    lines = [describe(r) for r in query.records(conn, sid)]
    return {
        "session": head,
        "timeline": [
            {"timestamp": x.timestamp, "depth": x.depth, "what": x.label, "text": x.text}
            for x in lines
        ],
    }


def record(conn: Any, args: dict[str, Any]) -> Any:
    sid = str(_str(args, "session_id", True))
    seq = args.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise BadParams("seq must be an integer")
    for rec in query.records(conn, sid):
        if rec.get("seq") == seq:
            return rec
    raise WaysError(f"no record {seq} in session {sid}")


VERIFY = {
    "name": "verify_record",
    "description": "One record with its proof: the records of its rule's hash chain up to "
    "the signed checkpoint that covers it, as JSON lines. Save `proof` to a file and run "
    "`ways sensors verify FILE --key ROOTKEY` (`ways keys show` prints the key).",
    "inputSchema": _schema(
        {"session_id": STR, "seq": {"type": "integer", "minimum": 1}}, ["session_id", "seq"]
    ),
}


def verify(conn: Any, args: dict[str, Any]) -> Any:
    from ..store.proof import Unproven, proof

    sid = str(_str(args, "session_id", True))
    seq = args.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise BadParams("seq must be an integer")
    try:
        answer = proof(conn, sid, seq)
    except Unproven as exc:
        raise WaysError(str(exc)) from None
    if len(answer["proof"]) > PROOF_MAX:  # a cut proof proves nothing: say so instead
        raise WaysError(f"its proof is {len(answer['proof'])} characters, past {PROOF_MAX}")
    answer["check"] = "save proof to FILE, then: ways sensors verify FILE --key ROOTKEY"
    return answer


def tools(store: str | None = None) -> dict[str, Tool]:
    """The tools over the store at `store` (default: the data root's)."""
    return {
        "search_history": (SEARCH, _guarded(search, store)),
        "session_timeline": (TIMELINE, _guarded(timeline, store)),
        "get_record": (RECORD, _guarded(record, store)),
        "verify_record": (VERIFY, _guarded(verify, store, 2 * PROOF_MAX)),
    }


INSTRUCTIONS = (
    "ways keeps a masked record of past coding-agent sessions on this machine. Use "
    "search_history to find what was run, said or touched before; session_timeline and "
    "get_record for the context of a result."
)
