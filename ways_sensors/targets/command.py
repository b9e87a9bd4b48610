"""The `command` target: run argv without a shell; exit 0 is acceptance.

The record goes on stdin as one JSON line (`input: stdin`, the default) or as the last
argument (`input: args`). The process starts in its own session and process group;
at the deadline the whole group gets SIGKILL, so a command that ignores SIGTERM and the
grandchildren it forked all go. stdout and stderr go to /dev/null: a consumer's chatter
never reaches a terminal or Claude Code.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

from . import DELIVERED, ERROR, REFUSED, TIMEOUT, Outcome


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def deliver(spec, record, line: bytes, ctx, deadline: float) -> Outcome:
    argv = list(spec.argv)
    stdin_data = None
    if spec.input == "args":
        argv.append(line.decode("utf-8", "surrogateescape"))
    else:
        stdin_data = line + b"\n"
    env = None
    if spec.env:
        env = {**os.environ, **{k: os.path.expandvars(v) for k, v in spec.env.items()}}
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return Outcome(TIMEOUT, "deadline passed before the start")
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
        return Outcome(ERROR, type(exc).__name__)
    try:
        proc.communicate(stdin_data, timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        kill_group(proc)
        proc.wait()
        return Outcome(TIMEOUT, "killed at the rule timeout", killed=True)
    except BrokenPipeError:
        proc.wait(timeout=max(0.01, deadline - time.monotonic()))
    except BaseException:
        kill_group(proc)
        proc.wait()
        raise
    if proc.returncode == 0:
        return Outcome(DELIVERED)
    return Outcome(REFUSED, f"exit {proc.returncode}")
