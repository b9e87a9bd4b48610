"""Exit codes and the error tree of the command line.

    WaysError                    a failure a command reports in one line, then exits
    ├── UsageError        (2)    bad arguments, unknown key or sensor
    ├── InvalidError      (3)    a value or file the spec rejects; lint errors; a broken chain
    ├── OverriddenError   (4)    written, but a higher layer still decides the value
    └── WriteError        (5)    a file could not be written (or must not be overwritten)

`retryable` tells failures a retry can fix (a lock held too long, a full disk) from
permanent ones. The hook never raises any of these: it swallows everything and exits 0.
"""

from __future__ import annotations

OK = 0
USAGE = 2
INVALID = 3
OVERRIDDEN = 4
WRITE_FAILED = 5


class WaysError(Exception):
    code = 1
    retryable = False

    def __init__(self, message: str, *, hint: str | None = None):
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
    retryable = True
