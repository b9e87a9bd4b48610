"""A finished session's folder leaves `sessions/<sid>` in one step (state/session.py): a
dispatcher that a hook started as the last one left finds no folder and exits. Removed
file by file, the folder could be caught half gone: a late dispatcher made a new lock
file in it, took it, and waited out its idle minute on a session that had ended. What
a SIGKILL leaves on the way out is swept."""

from __future__ import annotations

import os
import threading
import time

from ways_sensors.dispatch import retention
from ways_sensors.state.session import Session

FRAMES = 3000


def test_a_leaving_folder_is_never_seen_half_removed(install):
    s = Session("leaving", install.layout)
    s.create()
    for i in range(FRAMES):
        with open(f"{s.spool}/{i:010d}.seg", "wb") as f:
            f.write(b"x")
    open(s.lock, "wb").close()
    partial: list[list[str]] = []
    polls = 0
    stop = threading.Event()

    def watch() -> None:
        nonlocal polls
        while not stop.is_set():
            try:
                names = sorted(os.listdir(s.dir))
                whole = "dispatch.lock" in names and len(os.listdir(s.spool)) == FRAMES
            except FileNotFoundError:
                continue  # gone, or going: both fine
            polls += 1
            if not whole:
                partial.append(names)

    watcher = threading.Thread(target=watch)
    watcher.start()
    time.sleep(0.05)  # the watcher has seen the whole folder
    s.leave(1, {})
    stop.set()
    watcher.join()
    assert polls > 0
    assert partial == []
    assert not os.path.exists(s.dir)
    assert os.listdir(install.layout.sessions_dir()) == []
    assert s.read_ledger()["seq"] == 1


def test_a_folder_left_on_its_way_out_is_swept_once_an_hour_old(install):
    sessions = install.layout.sessions_dir()
    Session("alive", install.layout).create()
    old, fresh = f"{sessions}/.gone-old-1", f"{sessions}/.gone-fresh-2"
    for folder in (old, fresh):
        os.makedirs(f"{folder}/spool", mode=0o700)
        open(f"{folder}/spool/0000000001.seg", "wb").close()
    hour_ago = time.time() - retention.TMP_AGE - 60
    os.utime(old, (hour_ago, hour_ago))
    assert install.layout.sessions() == ["alive"]  # never taken for a session
    retention.sweep(install.layout)
    assert sorted(os.listdir(sessions)) == [".gone-fresh-2", "alive"]
