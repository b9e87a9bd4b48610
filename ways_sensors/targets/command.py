"""The `command` target: run argv without a shell; exit 0 is acceptance.

The record goes on stdin as one JSON line (`input: stdin`, the default) or as the last
argument (`input: args`). A batch goes on one stdin, one line per record, or as one
run per record with `input: args`. The process starts in its own session and process
group; at the deadline the whole group gets SIGKILL, so a command that ignores SIGTERM
and the grandchildren it forked all go. stdout and stderr go to /dev/null: a
consumer's chatter never reaches a terminal or Claude Code.

Failures: a command that does not exist or is not executable (or a `cwd` that is not
a folder) is permanent; a non-zero exit, a timeout and a failed fork are retryable.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Literal

from msgspec import Meta, Struct

from .base import ERROR, REFUSED, TIMEOUT, Item, Outcome, accepted, permanent, retryable

if TYPE_CHECKING:
    import subprocess


class CommandTarget(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Run argv without a shell; the record on stdin (default) or as the last argument."""

    argv: Annotated[list[Annotated[str, Meta(min_length=1)]], Meta(min_length=1)]
    input: Literal["stdin", "args"] = "stdin"
    env: dict[str, str] = {}
    cwd: str | None = None


Spec = CommandTarget
SECRET_FIELDS: tuple[str, ...] = ("env",)

# the program (or its folder) cannot be run as configured, whatever is retried
PERMANENT_ERRNOS = frozenset(
    {errno.ENOENT, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.ENOEXEC, errno.EISDIR}
)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _run(
    spec: CommandTarget, argv: list[str], stdin_data: bytes | None, deadline: float
) -> Outcome:
    import subprocess

    env = None
    if spec.env:
        env = {**os.environ, **{k: os.path.expandvars(v) for k, v in spec.env.items()}}
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return retryable(TIMEOUT, "deadline passed before the start")
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=os.path.expanduser(spec.cwd) if spec.cwd else None,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
        if exc.errno in PERMANENT_ERRNOS:
            return permanent(ERROR, f"cannot run the command: {name}")
        return retryable(ERROR, name)
    try:
        proc.communicate(stdin_data, timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        kill_group(proc)
        proc.wait()
        return retryable(TIMEOUT, "killed at the rule timeout", killed=True)
    except BrokenPipeError:
        proc.wait(timeout=max(0.01, deadline - time.monotonic()))
    except BaseException:
        kill_group(proc)
        proc.wait()
        raise
    if proc.returncode == 0:
        return accepted()
    return retryable(REFUSED, f"exit {proc.returncode}")


def deliver(
    spec: CommandTarget, batch: Sequence[Item], ctx: Mapping[str, str], deadline: float
) -> Outcome:
    if spec.input != "args":
        return _run(spec, list(spec.argv), b"".join(i.line + b"\n" for i in batch), deadline)
    outcome = accepted()
    for item in batch:
        arg = item.line.decode("utf-8", "surrogateescape")
        outcome = _run(spec, [*spec.argv, arg], None, deadline)
        if not outcome.accepted:
            break
    return outcome


def destination(spec: CommandTarget) -> str:
    return "command " + " ".join(spec.argv)


def off_machine(spec: CommandTarget) -> bool:
    return True  # a command may forward what it reads anywhere
