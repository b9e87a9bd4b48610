"""targets/spawn.py with real processes: what the command target relies on, and the
waitpid polling that stands in for a pidfd where there is none."""

from __future__ import annotations

import errno
import os
import signal
import time

import pytest

from ways_sensors.targets import spawn


def test_a_program_that_cannot_start_raises_its_errno(tmp_path):
    with pytest.raises(OSError) as exc:
        spawn.start([str(tmp_path / "missing")], stdin=True)
    assert exc.value.errno == errno.ENOENT
    with pytest.raises(OSError) as exc:
        spawn.start(["true"], stdin=False, cwd=str(tmp_path / "no-such-folder"))
    assert exc.value.errno == errno.ENOENT


def test_the_exit_code_and_a_signal_come_back_as_subprocess_gives_them():
    child = spawn.start(["sh", "-c", "exit 3"], stdin=False)
    assert child.wait(time.monotonic() + 30) == 3
    child = spawn.start(["sleep", "30"], stdin=False)
    assert child.wait(time.monotonic() + 0.2) is None  # still running at the deadline
    os.kill(child.pid, signal.SIGKILL)
    assert child.reap() == -signal.SIGKILL


def test_feeding_a_command_that_never_reads_stops_at_the_deadline():
    child = spawn.start(["sleep", "30"], stdin=True)
    try:
        t = time.monotonic()
        assert child.feed(b"x" * (4 << 20), t + 0.3) is False  # the pipe filled up
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.reap()


def test_the_polling_wait_sees_an_exit_and_a_deadline():
    """Where os.pidfd_open is missing (not Linux 5.3+), the exit is polled."""
    child = spawn.start(["sleep", "0.3"], stdin=False)
    assert spawn._exited_polling(child.pid, time.monotonic() + 0.05) is False
    assert spawn._exited_polling(child.pid, time.monotonic() + 30) is True
    assert child.reap() == 0  # not reaped by the look: the exit code is still there
