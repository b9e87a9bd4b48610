"""The client's trace a session joined, shared by the dispatcher and the blocking path.

A session joins the first valid $TRACEPARENT its hooks carried (context.py). Two
processes build its records: the dispatcher (from the spool) and, for `mode: blocking`
rules, the hook itself, which never sees the dispatcher's state. For both to stamp the
same `traceparent` on every record, the joined value lives in one file that is written
once and never replaced:

    sessions/<sid>/trace.json     {"traceparent": "00-<32 hex>-<16 hex>-<2 hex>"}

0600 in the session's 0700 folder, created atomically with its content (a private
temporary file hard-linked to the name: link() fails when the name exists, so the first
writer wins and nobody ever reads a half-written file). The dispatcher writes it when
it joins (at the first frame carrying a valid value) and when it starts with a joined
trace (a resumed session's, from the ledger a removed folder left); a hook running a blocking rule
writes it when its own $TRACEPARENT is valid and the file is not there yet. Whoever
comes second adopts what the file says. A trace id is an identifier, not content.
SIGKILL: the file is there whole or not at all (a temporary name left behind is
removed with the session folder).

Nothing here is imported by the hook's fast path; the blocking path imports it only
when a blocking rule fires.
"""

from __future__ import annotations

import os

from .. import jsoncore
from ..state.layout import Layout, read_state
from ..state.secure import open_private
from .context import normal

NAME = "trace.json"


def path(layout: Layout, sid: str) -> str:
    return layout.session_dir(sid) + "/" + NAME


def read(layout: Layout, sid: str) -> str | None:
    """The session's joined traceparent: the session folder's file, else (a resumed
    session whose folder went at its end) the one its ledger kept (session.py). None
    when it has joined none, or what is there is not a valid value."""
    return _read(path(layout, sid)) or _read(layout.ledger(sid))


def _read(file: str) -> str | None:
    value = read_state(file)
    return normal(value.get("traceparent")) if isinstance(value, dict) else None


def settle(layout: Layout, sid: str, candidate: str | None) -> str | None:
    """The session's joined traceparent: the file's when there is one, else `candidate`
    (already valid, context.normal) written as the session's, first writer winning.
    None when the session has joined none and `candidate` is None."""
    joined = _read(path(layout, sid))
    if joined is not None or candidate is None:
        return joined
    final = path(layout, sid)
    tmp = "%s.%d.%s.tmp" % (final, os.getpid(), os.urandom(4).hex())
    fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        os.write(fd, jsoncore.dumps({"traceparent": candidate}).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, final)
    except FileExistsError:
        return _read(final) or candidate  # a file that is not valid never wins
    finally:
        os.unlink(tmp)
    return candidate
