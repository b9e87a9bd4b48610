"""`ways sensors dispatch -- ID` (or `--session ID`): the per-session dispatcher.

The hook starts it with the id after `--`, since a valid id may start with `-` (argparse
would read `--session -abc` as a missing value and exit, delivering nothing).

`ways.dispatch_idle_seconds` in the user's config.yaml sets how long it waits for new
records before exiting (default 60); a new hook event starts it again.
"""

from __future__ import annotations

import argparse

from ..errors import UsageError
from ..layout import valid_session_id


def idle_seconds(default: float) -> float:
    from ..layers import read_config

    config, _ = read_config()
    ways = _ways if isinstance(_ways := config.get("ways"), dict) else {}
    value = ways.get("dispatch_idle_seconds")  # settings.DISPATCH_IDLE
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 86400:
        return float(value)
    return default


def run(args: argparse.Namespace) -> int:
    if args.resume_owed:  # the resumer, started by the hook at a session start
        from ..resume import run_owed

        return run_owed()
    given = [s for s in (args.session_id, args.session) if s is not None]
    if len(given) != 1:
        raise UsageError("name one session: ways sensors dispatch -- ID")
    session = given[0]
    if not valid_session_id(session):
        raise UsageError(f"{session!r} is not a session id")
    from ..dispatcher import IDLE, Dispatcher

    idle = args.idle if args.idle is not None else idle_seconds(IDLE)
    return Dispatcher(session, idle=idle).run()
