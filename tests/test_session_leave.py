"""A session's dispatcher that drained it and left is not followed by another: a hook
whose frame it served probes after it left (launch.py) and starts none, and its folder
leaves `sessions/<sid>` in one step (state/session.py), so a dispatcher started late
finds no folder and exits. Before, the probe made the folder again, or a late
dispatcher made a new lock file in the half-removed one, and either way a dispatcher
waited out its idle minute on a session that had ended (a lane run under load met it).
What a SIGKILL leaves on the way out is swept."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

from ways_sensors.dispatch import retention
from ways_sensors.state.session import Session

from .helpers import SESSION, SID, dispatcher_done, play, wait_until

FRAMES = 3000


def starts(install) -> int:
    log = install.state_root / "events.log"
    return sum('"dispatch.start"' in line for line in log.read_text().splitlines())


def test_a_hook_probing_after_the_dispatcher_left_starts_none(install, tmp_path):
    out = tmp_path / "out.jsonl"
    install.sensor(
        "s", f"rules:\n  r:\n    sections: [tool_call]\n    dispatch: {{file: {{path: '{out}'}}}}\n"
    )
    play(install, SESSION)
    assert wait_until(lambda: dispatcher_done(install, SID), timeout=60)
    assert wait_until(lambda: not (install.sessions() / SID).exists(), timeout=60)
    before = starts(install)
    probe = f"from ways_sensors.dispatch import launch; print(launch.ensure_dispatcher({SID!r}))"
    r = subprocess.run([sys.executable, "-c", probe], env=install.env, capture_output=True)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"False\n", b"")
    time.sleep(1)  # what a started dispatcher would have logged by now
    assert starts(install) == before
    assert not (install.sessions() / SID).exists()


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
