"""files.locked: the lock of a user's file lives in the state root, never beside the file;
and no command leaves anything but its own files in the user's folders."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ways_sensors.errors import WriteError
from ways_sensors.state.files import lock_path, locked

from .helpers import spawn, wait_for_open

HOLDER = """
import sys
from ways_sensors.state.files import locked
with locked(sys.argv[1], state=sys.argv[2]):
    print("held", flush=True)
    sys.stdin.read()
"""


def listing(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()} if folder.exists() else set()


def test_the_lock_lives_in_the_state_root_and_outlives_its_holder(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    target = config / "team.yaml"
    state = tmp_path / "state"
    with locked(str(target), state=str(state)):
        lock = Path(lock_path(str(target), str(state)))
        assert lock.parent == state / "locks" and len(lock.stem) == 32
        assert stat.S_IMODE(lock.stat().st_mode) == 0o600
        assert stat.S_IMODE(lock.parent.stat().st_mode) == 0o700
        assert listing(config) == set()
    # never unlinked: a waiter on the old inode and a newcomer must share one file
    assert lock.exists() and listing(state / "locks") == {lock.name}
    assert listing(config) == set()


def test_the_key_is_the_directory_entry_not_its_spelling(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    state = str(tmp_path / "state")
    a = lock_path(str(real / "s.yaml"), state)
    assert lock_path(str(tmp_path / "link" / "s.yaml"), state) == a
    assert lock_path(str(real / "sub" / ".." / "s.yaml"), state) == a
    assert lock_path(str(real / "t.yaml"), state) != a


def test_a_second_process_waits_for_the_holder(tmp_path):
    target, state = str(tmp_path / "settings.json"), str(tmp_path / "state")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, target, state],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(WriteError) as err, locked(target, timeout=0.2, state=state):
            pass
        assert "another process" in err.value.message
    finally:
        holder.communicate(timeout=30)  # closes its stdin: it lets go
    with locked(target, timeout=5, state=state):
        pass


def test_an_unwritable_state_root_is_a_write_error(tmp_path):
    state = tmp_path / "state"
    state.write_text("a file, not a folder")
    with pytest.raises(WriteError) as err, locked(str(tmp_path / "x.yaml"), state=str(state)):
        pass
    assert "cannot lock" in err.value.message


RULE = "{sections: [tool_call], dispatch: {file: {path: '/tmp/x.jsonl'}}}"


def test_no_command_leaves_a_lock_in_the_users_folders(install):
    sensors, claude = install.user_sensors, install.home / ".claude"

    def ok(*args: str) -> None:
        r = install.ways(*args)
        assert r.returncode == 0, (args, r.stderr)

    ok("settings", "set", "ways.sensors.audit.rules.all.timeout", "2s")  # creates audit.yaml
    assert listing(sensors) == {"audit.yaml"}
    ok("settings", "set", "ways.sensors.audit.rules.all.timeout", "3s")  # edits it in place
    ok("settings", "set", "ways.sensors.mine.rules.r", RULE)
    assert listing(sensors) == {"audit.yaml", "mine.yaml"}
    ok("settings", "unset", "ways.sensors.audit.rules.all.timeout")
    ok("sensors", "copy", "audit", "my-audit")
    assert listing(sensors) == {"audit.yaml", "mine.yaml", "my-audit.yaml"}
    ok("sensors", "rename", "mine", "ours")
    assert listing(sensors) == {"audit.yaml", "ours.yaml", "my-audit.yaml"}
    ok("sensors", "delete", "ours")
    assert listing(sensors) == {"audit.yaml", "my-audit.yaml"}
    ok("settings", "set", "ways.project_sensors", str(install.project))
    assert listing(install.config_root) == {"config.yaml", "sensors"}

    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"theme": "dark"}))
    ok("reconcile")
    assert listing(claude) == {"settings.json"}
    ok("reconcile", "--remove")
    assert listing(claude) == {"settings.json"}
    assert json.loads((claude / "settings.json").read_text()) == {"theme": "dark"}

    ok("settings", "set", "ways.sensors.p.rules.r", RULE, "--project", str(install.project))
    ok("reconcile", "--project", str(install.project))
    assert listing(install.project / ".claude") == {"settings.json", "ways-sensors"}
    assert listing(install.project_sensors) == {"p.yaml"}

    locks = install.state_root / "locks"
    assert listing(locks) and all(n.endswith(".lock") for n in listing(locks))
    assert {stat.S_IMODE(p.stat().st_mode) for p in locks.iterdir()} == {0o600}
    assert stat.S_IMODE(locks.stat().st_mode) == 0o700


def test_a_user_file_is_locked_across_processes_by_its_state_lock(install):
    """`ways settings set` waits on the lock another process holds in the state root."""
    path = install.sensor("team", f"rules:\n  r: {RULE}\n")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), str(install.state_root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=install.env,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        waiter = spawn(install, "settings", "set", "ways.sensors.team.rules.r.timeout", "2s")
        wait_for_open(waiter.pid, lock_path(str(path), str(install.state_root)))
        assert "timeout" not in path.read_text()  # it waits: nothing written yet
    finally:
        holder.communicate(timeout=30)  # closes its stdin: it lets go
    _, err = waiter.communicate(timeout=60)
    assert waiter.returncode == 0, err
    assert "timeout: 2s" in path.read_text()
    assert os.listdir(install.user_sensors) == ["team.yaml"]
