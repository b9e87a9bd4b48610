"""`ways sensors emit --section way_event --session ID [--input FILE|-]`.

The entry for other tools (the ways engine) to hand in their own records through the
same spool the hook writes: one JSON object, with `kind` one of fired, suppressed,
judged, becomes a `way_event` record of that session, delivered by its dispatcher.
"""

from __future__ import annotations

import argparse
import json
import time

from .. import index
from ..dispatch import launch
from ..errors import InvalidError, UsageError
from ..records import WAY_EVENT
from ..state import layout, spool
from . import read_json_object

KINDS = ("fired", "suppressed", "judged")


def run(args: argparse.Namespace) -> int:
    if args.section != "way_event":
        raise UsageError("emit takes --section way_event; the other sections come from hooks")
    if not layout.valid_session_id(args.session):
        raise UsageError(f"{args.session!r} is not a session id")
    data = read_json_object(args.input, "emit")
    if data.get("kind") not in KINDS:
        raise InvalidError(f"a way_event's kind is one of {', '.join(KINDS)}")
    body = json.dumps({**data, "session_id": args.session, "hook_event_name": WAY_EVENT})
    spool.append(args.session, WAY_EVENT, time.time_ns(), index.project_dir(), body.encode())
    launch.ensure_dispatcher(args.session)
    print(f"way_event ({data['kind']}) handed to session {args.session}")
    return 0
