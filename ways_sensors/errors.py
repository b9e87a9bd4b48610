"""Exit codes, the error tree of the command line, and the log of unexpected errors.

    WaysError                    a failure a command reports in one line, then exits
    ├── UsageError        (2)    bad arguments, unknown key or sensor
    ├── InvalidError      (3)    a value or file the spec rejects; lint errors; a broken chain
    ├── OverriddenError   (4)    written, but a higher layer still decides the value
    └── WriteError        (5)    a file could not be written (or must not be overwritten)

Anything else a command raises is unexpected: the boundary in cli.py prints one line
naming the command and its log (errorlog.py), and exits UNEXPECTED. The hook never raises any of
these: it swallows everything and exits 0. (Delivery's failures are not errors of this
tree: a target returns an Outcome, retryable or permanent; targets/base.py.)
"""

from __future__ import annotations

OK = 0
FAILED = 1  # ran and did not succeed: `demo` not passing
UNEXPECTED = 1  # an error no command anticipated (cli.py's boundary); see errors.log
USAGE = 2
INVALID = 3
OVERRIDDEN = 4
WRITE_FAILED = 5
NOT_RECORDING = 6  # `status`: an enabled sensor file refused, or a rule gone while sessions run
NOT_DELIVERED = 7  # `sensors fire`: a test record was refused or timed out
UNHEALTHY = 8  # `status`: dead letters wait, or a consumer owed records failed too long
NOT_SIGNED = 9  # `status`: a chained rule's tree could not go on in a session (evidence/carry.py)
NOT_CONFIRMED = 10  # `sensors fire`, `deadletters replay`: sent, but nothing can confirm it (UDP)
INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports it
BROKEN_PIPE = 141  # stdout's reader went away (`ways ... | head`): 128 + SIGPIPE


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
