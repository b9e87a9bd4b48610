"""The log of unexpected errors: what cli.py's boundary writes when a command fails in
a way no command anticipated (errors.py draws the error tree).

`<state>/errors.log` (0600, in the 0700 state root; secure.py checks both) holds one
entry per unexpected error; it is for the user's eyes, so it keeps the traceback (which
may quote paths and values) but never the command's arguments:

    --- <ISO UTC time> ways <version> '<command>' pid <pid>
    Traceback (most recent call last):
      ...                         (its last ENTRY_MAX bytes when longer)

Bounded: before appending, a log over LOG_MAX bytes becomes `errors.log.1` (replacing
the older one), so the two files never hold much more than 2 * LOG_MAX.
"""

from __future__ import annotations

import os

LOG_MAX = 256 * 1024
ENTRY_MAX = 64 * 1024


def log_path(state: str | None = None) -> str:
    """errors.log under the state root `state` (default: XDG's)."""
    from .layout import Layout

    return Layout(state).errors_log()


def log_unexpected(command: str, exc: BaseException, state: str | None = None) -> str:
    """Append `exc`'s traceback to errors.log; returns its path. Raises OSError when the
    state root cannot hold it (the caller says so instead of printing the traceback)."""
    import time
    import traceback

    from .. import __version__
    from . import secure

    path = log_path(state)
    root = os.path.dirname(path)
    secure.ensure_private_dir(root, root)
    try:
        if os.lstat(path).st_size > LOG_MAX:
            os.replace(path, path + ".1")
    except FileNotFoundError:
        pass
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    head = f"--- {stamp} ways {__version__} {command!r} pid {os.getpid()}\n"
    body = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    data = body.encode("utf-8", "replace")
    if len(data) > ENTRY_MAX:  # keep the end: the exception and the innermost frames
        data = b"[... earlier frames cut ...]\n" + data[-ENTRY_MAX:]
    data = head.encode("utf-8", "replace") + data
    fd = secure.open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, root)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return path
