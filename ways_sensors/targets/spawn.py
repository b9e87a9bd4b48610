"""Run one consumer command: fork, become what command.py asks, exec; feed stdin; wait.

Not `subprocess`: its import (with locale, selectors and signal) is kept off the
blocking path (dispatch/blocking.py; bench/RESULTS.md, Blocking path cost), and its
`communicate(timeout=...)` polls for the exit with sleeps that double from 0.5 ms. What
the target needs is small, so it is written here with `os` alone:

  start     fork; in the child: a session of its own (setsid), the signals Python
            ignores (SIGPIPE, SIGXFSZ) back to their defaults, the caller's
            `before_exec` (command.py makes it a child subreaper), stdin from a pipe
            or /dev/null, stdout and stderr to /dev/null, every other descriptor
            closed, then exec (PATH searched as execvp does, in the child's env). A
            failure before or at exec (no such program, E2BIG, a missing cwd) comes
            back through a close-on-exec pipe as the child's errno: start raises it
            as OSError in the caller, as subprocess does
  feed      write stdin without blocking past the deadline; a command that stops
            reading (EPIPE) ends the feed, and its exit decides
  wait      the exit status by the deadline: on Linux a pidfd polled until the exit
            (no sleeps); elsewhere waitpid with short sleeps; None at the deadline

The child runs only `os` calls and `before_exec` between fork and exec (as
subprocess's preexec_fn does) and leaves through os._exit, whatever happens. A fork,
not posix_spawn (vfork, which would be quicker), because the child must call
prctl before exec; Python 3.12+ warns about a fork in a process with threads (the
dispatcher's workers), a DeprecationWarning shown only where warnings are errors
(the test suite ignores that one: pyproject.toml).
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# signal.py's C module: its constants and signal(), without signal.py's enums (enum
# stays off the blocking path: dispatch/blocking.py); no stub for the type checker
signals: Any = __import__("_signal")

CHUNK = 1 << 16  # stdin written in pieces this size, each within the deadline
_EXEC_FAILED = 127  # the child's status when exec failed (its errno went up the pipe)
_RESTORED = ("SIGPIPE", "SIGXFZ", "SIGXFSZ")  # ignored by Python, default for a command


class Child:
    """A started command: its pid and the write end of its stdin (None: /dev/null)."""

    __slots__ = ("pid", "status", "stdin")

    def __init__(self, pid: int, stdin: int | None) -> None:
        self.pid, self.stdin = pid, stdin
        self.status: int | None = None  # the exit code once reaped (negative: a signal)

    def feed(self, data: bytes, deadline: float) -> bool:
        """Write `data` to stdin and close it; False when the deadline came first. A
        command that closed its stdin early (EPIPE) is not an error: its exit decides."""
        fd, self.stdin = self.stdin, None
        if fd is None:
            return True
        try:
            os.set_blocking(fd, False)
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(fd, view[:CHUNK]) :]
                except BlockingIOError:
                    if not _writable(fd, deadline):
                        return False
                except BrokenPipeError:
                    return True
            return True
        finally:
            os.close(fd)

    def wait(self, deadline: float) -> int | None:
        """The exit code (negative: killed by that signal), reaping the child; None
        when it still runs at `deadline`."""
        if self.status is not None:
            return self.status
        if not _exited(self.pid, deadline):
            return None
        return self.reap()

    def reap(self) -> int:
        """Wait for the exit, however long (after a kill), and return the exit code."""
        if self.status is None:
            _, status = os.waitpid(self.pid, 0)
            self.status = os.waitstatus_to_exitcode(status)
        return self.status

    def close(self) -> None:
        if self.stdin is not None:
            os.close(self.stdin)
            self.stdin = None


def start(
    argv: list[str],
    stdin: bool,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    before_exec: Callable[[], None] | None = None,
) -> Child:
    """Fork and exec `argv` (module docstring); OSError when it cannot run."""
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    in_r, in_w = os.pipe2(os.O_CLOEXEC) if stdin else (-1, -1)
    try:
        null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        try:
            pid = os.fork()
            if pid == 0:  # the child: never returns
                _child(argv, in_r if stdin else null, null, err_w, env, cwd, before_exec)
        finally:
            os.close(null)
    except BaseException:
        for fd in (err_r, err_w, in_r, in_w):
            if fd >= 0:
                os.close(fd)
        raise
    os.close(err_w)
    if in_r >= 0:
        os.close(in_r)
    try:
        report = _read_all(err_r)
    finally:
        os.close(err_r)
    if report:  # exec failed: the child exits at once with its errno reported
        if in_w >= 0:
            os.close(in_w)
        os.waitpid(pid, 0)
        code = int(report) if report.isdigit() else 0
        raise OSError(code, os.strerror(code) if code else "the command could not start")
    return Child(pid, in_w if in_w >= 0 else None)


def _child(
    argv: list[str],
    stdin_fd: int,
    null: int,
    err_w: int,
    env: dict[str, str] | None,
    cwd: str | None,
    before_exec: Callable[[], None] | None,
) -> None:
    code = 0
    try:
        os.setsid()
        for name in _RESTORED:  # as subprocess's restore_signals: a pipe's reader that
            if hasattr(signals, name):  # quits ends its writer, as in a shell
                signals.signal(getattr(signals, name), signals.SIG_DFL)
        if before_exec is not None:
            before_exec()
        os.dup2(stdin_fd, 0)
        os.dup2(null, 1)
        os.dup2(null, 2)
        _close_fds(keep=err_w)  # close_fds: only 0, 1, 2 and the report pipe stay
        if cwd is not None:
            os.chdir(cwd)
        if env is None:
            os.execvp(argv[0], argv)
        else:
            os.execvpe(argv[0], argv, env)
    except OSError as exc:
        code = exc.errno or 0
    except BaseException:
        code = 0
    try:
        os.write(err_w, str(code).encode() if code else b"x")
    finally:
        os._exit(_EXEC_FAILED)


def _close_fds(keep: int) -> None:
    """Close every descriptor above 2 but `keep`: those /proc/self/fd lists (as
    subprocess does: bounded by what is open, where closerange without close_range(2)
    would try every number up to the limit), else the whole range."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except (OSError, ValueError):
        os.closerange(3, keep)
        os.closerange(keep + 1, _max_fd())
        return
    for fd in fds:
        if fd > 2 and fd != keep:
            try:
                os.close(fd)
            except OSError:
                pass  # the listing's own descriptor, gone with it


def _max_fd() -> int:
    try:
        return max(int(os.sysconf("SC_OPEN_MAX")), 256)
    except (ValueError, OSError):
        return 256


def _read_all(fd: int) -> bytes:
    """Until EOF: the child's exec closed it (success) or the child wrote and exited."""
    out = b""
    while True:
        chunk = os.read(fd, 64)
        if not chunk:
            return out
        out += chunk


def _writable(fd: int, deadline: float) -> bool:
    import select

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return bool(poller.poll(remaining * 1000))  # or its reader went: the write says EPIPE


def _exited(pid: int, deadline: float) -> bool:
    """Whether `pid` has exited by `deadline` (not reaped)."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux 5.3+: poll with short sleeps
        return _exited_polling(pid, deadline)
    import select

    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        while True:
            remaining = deadline - time.monotonic()
            if poller.poll(max(0.0, remaining) * 1000):
                return True
            if remaining <= 0:
                return False
    finally:
        os.close(pidfd)


def _exited_polling(pid: int, deadline: float) -> bool:
    delay = 0.0005
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, 0.05)
