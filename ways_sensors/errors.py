"""Exit codes, the error tree of the command line, and the log of unexpected errors.

    WaysError                    a failure a command reports in one line, then exits
    ├── UsageError        (2)    bad arguments, unknown key or sensor
    ├── InvalidError      (3)    a value or file the spec rejects; lint errors; a broken chain
    ├── OverriddenError   (4)    written, but a higher layer still decides the value
    └── WriteError        (5)    a file could not be written (or must not be overwritten)

Anything else a command raises is unexpected: the boundary in cli.py prints one line
naming the command and this log, and exits UNEXPECTED. The hook never raises any of
these: it swallows everything and exits 0. (Delivery's failures are not errors of this
tree: a target returns an Outcome, retryable or permanent; targets/base.py.)

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

OK = 0
FAILED = 1  # ran and did not succeed: `demo` not passing
UNEXPECTED = 1  # an error no command anticipated (cli.py's boundary); see errors.log
USAGE = 2
INVALID = 3
OVERRIDDEN = 4
WRITE_FAILED = 5
NOT_RECORDING = 6  # `status`: an enabled sensor file refused, or a rule gone while sessions run
NOT_DELIVERED = 7  # `sensors fire`: a test record was refused or timed out
NOT_SIGNED = 8  # `status`: a chained rule's tree could not go on in a session (evidence/carry.py)
INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports it
BROKEN_PIPE = 141  # stdout's reader went away (`ways ... | head`): 128 + SIGPIPE

LOG_MAX = 256 * 1024
ENTRY_MAX = 64 * 1024


class WaysError(Exception):
    code = FAILED

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(WaysError):
    code = USAGE


class InvalidError(WaysError):
    code = INVALID


class OverriddenError(WaysError):
    code = OVERRIDDEN


class WriteError(WaysError):
    code = WRITE_FAILED


def log_path(state: str | None = None) -> str:
    """errors.log under the state root `state` (default: XDG's)."""
    from .layout import Layout

    return Layout(state).errors_log()


def log_unexpected(command: str, exc: BaseException, state: str | None = None) -> str:
    """Append `exc`'s traceback to errors.log; returns its path. Raises OSError when the
    state root cannot hold it (the caller says so instead of printing the traceback)."""
    import time
    import traceback

    from . import __version__, secure

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
