"""The dispatcher's wait on its spool folder (ways_sensors/dispatch/spoolwatch.py): a writer in
another process wakes it; with nothing owed it neither polls nor misses a frame."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

from ways_sensors.dispatch.spoolwatch import SpoolWatch

from .conftest import everything_sensor
from .helpers import SID, dispatcher_pid, lines, play, wait_until

APPEND = "import sys; open(sys.argv[1], 'ab').write(b'x')"


def test_an_append_by_another_process_ends_the_wait(tmp_path):
    folder = tmp_path / "spool"
    folder.mkdir()
    (folder / "0000000001.seg").write_bytes(b"")
    watch = SpoolWatch.open(str(folder))
    assert watch is not None
    try:
        assert watch.wait(0.05) is False  # nothing changed: the whole timeout
        for name in ("0000000001.seg", "0000000002.seg"):  # an append, then a new segment
            subprocess.run([sys.executable, "-c", APPEND, str(folder / name)], check=True)
            started = time.monotonic()
            assert watch.wait(30) is True
            assert time.monotonic() - started < 25  # woken, not timed out
            assert watch.wait(0.05) is False  # the burst's events were all read
    finally:
        watch.close()
    assert watch.wait(0.01) is False  # closed: a plain sleep, never a spin


def test_no_watch_where_the_folder_is_missing_or_a_link(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert SpoolWatch.open(str(tmp_path / "missing"), "s") is None  # later, not refused
    log = tmp_path / "state" / "agent-ways" / "events.log"
    assert not log.exists()
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert SpoolWatch.open(str(tmp_path / "link"), "s") is None  # IN_DONT_FOLLOW
    assert "dispatch.spool_watch_refused" in log.read_text()
    assert "ENOTDIR" in log.read_text() or "ELOOP" in log.read_text()


def _watched_inodes(pid: int) -> set[int]:
    """The inodes the process's inotify descriptors watch (/proc/PID/fdinfo)."""
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = f.read()
        except OSError:
            continue
        for line in info.splitlines():
            if line.startswith("inotify wd:"):
                fields = dict(part.split(":", 1) for part in line.split()[1:])
                found.add(int(fields["ino"], 16))
    return found


def test_a_quiet_dispatcher_waits_on_its_spool_and_wakes_for_the_next_frame(install, tmp_path):
    out = tmp_path / "out.jsonl"
    install.sensor("all", everything_sensor(out))
    play(install, ["SessionStart", "UserPromptSubmit"])
    assert wait_until(lambda: len(lines(out)) == 2)
    pid = dispatcher_pid(install)
    assert pid is not None
    spool = install.sessions() / SID / "spool"
    assert wait_until(lambda: spool.stat().st_ino in _watched_inodes(pid))
    # within the 2 s after a frame, where it used to poll every 5 ms: about 0.1 s of CPU
    proc = psutil.Process(pid)
    time.sleep(0.3)
    before = proc.cpu_times()
    time.sleep(1.5)
    after = proc.cpu_times()
    used = (after.user - before.user) + (after.system - before.system)
    assert used < 0.05, f"{used:.3f} s of CPU in 1.5 s with nothing owed"
    play(install, ["PreToolUse"])  # the next frame is built and delivered all the same
    assert wait_until(lambda: len(lines(out)) == 3)
    assert dispatcher_pid(install) == pid
