"""`ways sessions list|show|search|replay`: the session store read back
(docs/sessions.md).

    (list, show, search and replay read the store --store names: a path, or a
    postgresql:// URL for the team store; store/postgres.py)
    list            sessions newest first: id, agent, start, end, records, prompts,
                    tools, cost, how it ended, its first prompt
    show SID        the timeline: every record, one line each, a subagent's indented
    search QUERY    records whose text holds QUERY (store/query.py), best first, the
                    match highlighted, with session, time, agent and rule
    replay SID      the session as one self-contained HTML page (services/replay.py)
    import [PATHS]  the agents' own session files (services/session_import.py)

Exit codes: 0 something was found (or the page written, or the files imported); 1
nothing: no session of that id, no match, no store yet (the message says how to turn it
on), no session file to import; 2 bad arguments; 3 the file is not a session store of
this version; 5 the page could not be written.

JSON (`--json`, stable): list: [session, ...] with the columns of store/schema.py's
`sessions`; show: {"session": {...}, "records": [record, ...]} (the records as
delivered); search: [hit, ...], each {"id", "session_id", "timestamp", "agent", "rule",
"section", "tool", "seq", "rule_seq", "imported", "snippet", "highlights"}
(`highlights`: [start, end] offsets of the matches in `snippet`); import: {"files",
"sessions", "records", "unchanged", "live", "unreadable"}.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import FAILED, InvalidError, UsageError, WriteError
from ..services.sessions import describe, open_reader
from ..services.table import paint, printable_line, render
from ..store import query

FILTERS = tuple(f for f in query.Filters.__dataclass_fields__ if f != "imported")
HEADS = (
    "SESSION",
    "AGENT",
    "START",
    "LAST",
    "RECORDS",
    "PROMPTS",
    "TOOLS",
    "COST",
    "END",
    "FIRST PROMPT",
)


def filters(args: argparse.Namespace) -> query.Filters:
    given = {name: getattr(args, name, None) for name in FILTERS}
    imported = getattr(args, "imported", None)
    return query.Filters(**given, imported=imported)


def list_(args: argparse.Namespace) -> int:
    rows = open_reader(args.store).sessions(filters(args), args.limit)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0 if rows else FAILED
    if not rows:
        print("no sessions match", file=sys.stderr)
        return FAILED
    table = [
        (
            r["session_id"],
            r["agent"] + (" (imported)" if r["imported"] else ""),
            r["first_ts"][:19].replace("T", " "),
            r["last_ts"][:19].replace("T", " "),
            r["records"],
            r["prompts"],
            r["tools"],
            f"${r['cost']:.4f}" if r["cost"] is not None else "",
            r["outcome"] or "",
            printable_line((r["first_prompt"] or "")[:60]),
        )
        for r in rows
    ]
    print(render(HEADS, table))
    print(paint("next: ways sessions show SESSION", "dim"))
    return 0


def _one_session(args: argparse.Namespace) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The session `args.sid` names and its records; None (said on stderr) when the
    store has no such session."""
    store = open_reader(args.store)
    head = store.session(args.sid)
    if head is None:
        print(f"no session {args.sid} in the store", file=sys.stderr)
        return None
    return head, store.records(args.sid)


def show(args: argparse.Namespace) -> int:
    found = _one_session(args)
    if found is None:
        return FAILED
    head, records = found
    if args.json:
        print(json.dumps({"session": head, "records": records}, indent=2))
        return 0
    print(f"session {head['session_id']}  {head['agent']}  {head['project'] or ''}")
    _timeline(records)
    return 0


def _timeline(records: list[dict[str, Any]]) -> None:
    for record in records:
        line = describe(record)
        indent = "  " * line.depth
        when = line.timestamp[11:23]
        print(printable_line(f"{when}  {indent}{line.label:<18} {line.text}".rstrip()))


def _highlighted(hit: dict[str, Any]) -> str:
    text, out, pos = hit["snippet"], [], 0
    for start, end in hit["highlights"]:
        out.append(printable_line(text[pos:start]))
        piece = printable_line(text[start:end])
        out.append(paint(piece, "bold") if paint("x", "bold") != "x" else f"[{piece}]")
        pos = end
    out.append(printable_line(text[pos:]))
    return "".join(out)


def search(args: argparse.Namespace) -> int:
    hits = open_reader(args.store).search(args.query, filters(args), args.limit)
    if args.json:
        print(json.dumps(hits, indent=2))
        return 0 if hits else FAILED
    if not hits:
        print("no records match", file=sys.stderr)
        return FAILED
    for hit in hits:
        where = f"{hit['timestamp'][:19].replace('T', ' ')}  {hit['session_id']}  "
        where += f"{hit['agent']}  {hit['rule']}  {hit['section']}"
        print(paint(printable_line(where), "dim"))
        print("  " + _highlighted(hit))
    return 0


def replay(args: argparse.Namespace) -> int:
    from ..services.replay import page

    found = _one_session(args)
    if found is None:
        return FAILED
    head, records = found
    if not args.html:  # in the terminal: the timeline, as `show` prints it
        _timeline(records)
        return 0
    html = page(head, records)
    try:
        _write_private(args.html, html)
    except OSError as exc:
        raise WriteError(f"could not write {args.html}: {exc.strerror or exc}") from None
    print(f"wrote {args.html}")
    return 0


def import_(args: argparse.Namespace) -> int:
    import os

    from ..services import session_import
    from ..store import default_path, postgres, sqlite

    if postgres.is_url(args.store):
        raise UsageError(
            "import writes a local store; a team store is filled by a store rule's deliveries"
        )
    files = session_import.plan(args.agent, args.paths)
    if not files:
        print("no session files found", file=sys.stderr)
        return FAILED
    where = os.path.expanduser(args.store) if args.store else default_path()
    try:
        conn = sqlite.connect(where, timeout=30.0)
    except sqlite.StoreError as exc:
        raise InvalidError(f"{where}: {exc}") from None
    result = session_import.run(conn, files)
    if args.json:
        print(json.dumps(result.as_json(), indent=2))
        return 0
    print(
        f"{result.records} new records of {result.sessions} sessions from {result.files} "
        f"files; {result.unchanged} already imported, {result.live} recorded live"
    )
    for path in result.unreadable:
        print(f"unreadable: {path}", file=sys.stderr)
    print(paint("next: ways sessions list --imported", "dim"))
    return 0


def _write_private(path: str, text: str) -> None:
    """The page holds session content: 0600, as every file ways writes of it."""
    import os

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
