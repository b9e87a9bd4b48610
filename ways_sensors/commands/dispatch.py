"""`ways sensors dispatch -- ID` (or `--session ID`): the per-session dispatcher.

The hook starts it with the id after `--`, since a valid id may start with `-` (argparse
would read `--session -abc` as a missing value and exit, delivering nothing).

`ways.dispatch_idle_seconds` in the user's config.yaml sets how long it waits for new
records before exiting (default 60); a new hook event starts it again.

Start-up is part of every drain (a hook event after an idle exit starts a dispatcher),
so the forms launch.py starts are read by `quick_args`, without argparse (its import and
the command tree would be a share of every dispatcher's start; anything else, `--help`
included, goes through argparse), and the cyclic collector is off while the dispatcher
loads (its full collections over a growing heap of just-imported modules would be
another share: bench/RESULTS.md, 2026-12-03 13:20); dispatcher.run turns it on, with its
own thresholds, to serve. The YAML reader loads only when there is a config.yaml to read
(`idle_seconds`).
"""

from __future__ import annotations

import gc
from types import SimpleNamespace

from ..errors import UsageError
from ..state.layout import valid_session_id

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up cost)
if TYPE_CHECKING:
    import argparse


def quick_args(argv: list[str]) -> SimpleNamespace | None:
    """The arguments of `-- ID`, `--session ID` and `--resume-owed`, each maybe with
    `--idle SECONDS`, as argparse would read them; None for any other form."""
    got: dict[str, object] = {"session_id": None, "session": None, "idle": None}
    got["resume_owed"] = False
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--" and i + 2 == len(argv):
            got["session_id"] = argv[i + 1]
        elif word == "--resume-owed" and not got["resume_owed"]:
            got["resume_owed"] = True
            i += 1
            continue
        elif word in ("--session", "--idle") and i + 1 < len(argv):
            key, value = word[2:], argv[i + 1]
            if got[key] is not None or value.startswith("-"):
                return None
            try:
                got[key] = value if key == "session" else float(value)
            except ValueError:
                return None
            i += 2
            continue
        else:
            return None
        break
    return SimpleNamespace(**got)


def idle_seconds(default: float) -> float:
    """`ways.dispatch_idle_seconds`, else `default`. With no config.yaml the YAML reader
    is not even loaded (userconfig.py): the dispatcher needs it for nothing else."""
    from ..config import userconfig

    config = userconfig.data()
    ways = _ways if isinstance(_ways := config.get("ways"), dict) else {}
    value = ways.get("dispatch_idle_seconds")  # settings.DISPATCH_IDLE
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 86400:
        return float(value)
    return default


def run(args: argparse.Namespace | SimpleNamespace) -> int:
    if args.resume_owed:  # the resumer, started by the hook at a session start
        from ..dispatch.resume import run_owed

        return run_owed()
    given = [s for s in (args.session_id, args.session) if s is not None]
    if len(given) != 1:
        raise UsageError("name one session: ways sensors dispatch -- ID")
    session = given[0]
    if not valid_session_id(session):
        raise UsageError(f"{session!r} is not a session id")
    gc.disable()  # while loading (the module docstring says why); dispatcher.run enables it
    try:
        from ..dispatch.dispatcher import IDLE, Dispatcher

        idle = args.idle if args.idle is not None else idle_seconds(IDLE)
        return Dispatcher(session, idle=idle).run()
    finally:
        gc.enable()
