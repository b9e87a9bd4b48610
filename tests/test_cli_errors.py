"""The error boundary of `ways` (cli.py), driven through the real command: an unexpected
error is one line and a logged traceback; Ctrl-C and a closed stdout are quiet; the
hook never prints whatever breaks."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

from ways_sensors.errors import BROKEN_PIPE, INTERRUPTED, UNEXPECTED
from ways_sensors.state.errorlog import LOG_MAX
from ways_sensors.state.files import lock_path, locked

from .conftest import payload
from .helpers import spawn, wait_for_open


def one_line_unexpected(r: subprocess.CompletedProcess, command: str) -> str:
    assert r.returncode == UNEXPECTED, r.stderr
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"ways: unexpected error in {command!r} ("), lines[0]
    return lines[0]


def test_an_unexpected_error_is_one_line_and_a_logged_traceback(install):
    """A state file that is a folder: nothing anticipates it, which is what the
    boundary is for. `copy` fails before writing the copy."""
    (install.state_root / "previews.json").mkdir(parents=True)
    r = install.ways("sensors", "copy", "audit", "mine")
    line = one_line_unexpected(r, "sensors copy")
    log = install.state_root / "errors.log"
    assert "IsADirectoryError" in line and line.endswith(f"details in {log}")
    assert r.stdout == ""
    assert not (install.user_sensors / "mine.yaml").exists()
    text = log.read_text()
    assert text.startswith("--- ") and "'sensors copy' pid " in text.splitlines()[0]
    assert "Traceback (most recent call last):" in text
    assert "IsADirectoryError" in text.splitlines()[-1]
    assert "mine" not in text.splitlines()[0]  # the command's arguments are not logged
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    events = [json.loads(x) for x in (install.state_root / "events.log").read_text().splitlines()]
    assert {"kind": "cli.unexpected", "command": "sensors copy"}.items() <= events[-1].items()
    assert events[-1]["error"] == "IsADirectoryError"


def test_the_log_is_bounded(install):
    (install.state_root / "previews.json").mkdir(parents=True)
    log = install.state_root / "errors.log"
    log.write_text("x" * (LOG_MAX + 1))
    one_line_unexpected(install.ways("sensors", "copy", "audit", "mine"), "sensors copy")
    assert (install.state_root / "errors.log.1").stat().st_size == LOG_MAX + 1
    assert log.read_text().startswith("--- ") and log.stat().st_size < LOG_MAX


def test_a_state_root_that_cannot_hold_the_log_is_still_one_line(install):
    install.state_root.parent.mkdir(parents=True)
    install.state_root.write_text("not a folder")
    r = install.ways("sensors", "copy", "audit", "mine")
    line = one_line_unexpected(r, "sensors copy")
    assert "could not be logged" in line and "NotADirectoryError" in line


def test_the_hook_never_reaches_the_boundary(install):
    """The same broken state root under the hook: nothing printed, exit 0, no log."""
    install.state_root.parent.mkdir(parents=True)
    install.state_root.write_text("not a folder")
    for wired in (True, False):
        r = install.hook(payload("PreToolUse"), wired=wired)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def test_ctrl_c_exits_130_quietly(install):
    """Interrupt `ways settings set` while it waits for a lock this test holds."""
    path = install.sensor("team", "rules: {}\n")
    with locked(str(path), state=str(install.state_root)):
        waiter = spawn(install, "settings", "set", "ways.sensors.team.description", "x")
        wait_for_open(waiter.pid, lock_path(str(path), str(install.state_root)))
        waiter.send_signal(signal.SIGINT)
        out, err = waiter.communicate(timeout=60)
    assert (waiter.returncode, out, err) == (INTERRUPTED, "", "")
    assert path.read_text() == "rules: {}\n"


def test_a_closed_stdout_exits_quietly(install):
    """`ways settings list | head -0`: the reader is gone before the first write."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        r = subprocess.run(
            [str(Path(sys.executable).parent / "ways"), "settings", "list"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=install.env,
            cwd=install.project,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert (r.returncode, r.stderr) == (BROKEN_PIPE, b"")
    assert not (install.state_root / "errors.log").exists()


def test_typed_errors_keep_their_codes_and_log_nothing(install):
    r = install.ways("settings", "get", "nope")
    assert r.returncode == 2 and r.stderr.startswith("ways: unknown key")
    assert not (install.state_root / "errors.log").exists()
