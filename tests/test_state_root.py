"""The state root under attack, through the real hook, dispatcher and commands, run as an
ordinary user (issue 12, defect 1).

An attacker who could write in the state root (it was world-writable) has planted a
symbolic link at every state path, a hard link, a FIFO and a world-writable spool
segment; or owns the root; or made the root itself a link. Each link points at bait the
victim could write (their own file, their own empty folder). After whole sessions and
the commands that write state, nothing was written through a link, every link is still
there, the root ends 0700, and each refusal was logged content-free (or, for a root that
is not the user's, every command says why in one line and the hook writes nothing).

CI runs as root: the victim is then an ordinary user made with `useradd` and every command
runs under `setpriv`; what the attacker plants is owned by `nobody`. Run as an ordinary
user, the test is the victim itself.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from ways_sensors.state.files import lock_path

from .conftest import kill_dispatchers
from .helpers import held, wait_until
from .victims import ATTACKER, BAIT, PROMPT, SECRET, Victim, victim_ids  # noqa: F401

NEW_RULE = "{sections: [tool_call], dispatch: {file: {path: ~/made.jsonl}}}"


@pytest.fixture
def victim(victim_ids):  # noqa: F811
    base = Path(tempfile.mkdtemp(prefix="ways-state-root-"))
    base.chmod(0o755)
    v = Victim(base, victim_ids)
    try:
        yield v
    finally:
        kill_dispatchers(base)
        shutil.rmtree(base, ignore_errors=True)


def dispatchers(base: Path) -> list[psutil.Process]:
    out = []
    for proc in psutil.process_iter(["cmdline", "environ"]):
        try:
            cmd, env = proc.info["cmdline"] or [], proc.info["environ"] or {}
        except psutil.Error:
            continue
        if "dispatch" in cmd and str(base) in env.get("XDG_STATE_HOME", ""):
            out.append(proc)
    return out


def stop_dispatcher(v: Victim, sid: str) -> None:
    """SIGKILL the session's dispatchers until its lock stays free (one a late hook
    started may take the lock when the first dies)."""
    lock = v.root / "sessions" / sid / "dispatch.lock"

    def free() -> bool:
        return not held(lock)

    for _ in range(10):
        for proc in dispatchers(v.base):
            try:
                if sid in proc.cmdline():
                    proc.kill()
            except psutil.Error:
                continue
        if wait_until(free, 5):
            time.sleep(0.3)
            if free():
                return
    raise AssertionError(f"the dispatcher of {sid} would not stop")


def records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


# --- a world-writable root with links at its own files and folders ----------------------


def test_links_at_the_roots_files_and_folders_are_refused_never_followed(victim):
    v = victim
    v.folder(".", 0o777)
    for name in ("events.log", "errors.log", "errors.log.1", "redaction.key"):
        v.plant(name, v.bait_file)
    for name in ("locks", "counters", "deadletters", "pending", "ledger"):
        v.plant(name, v.bait_dir)
    os.link(v.bait_file2, v.root / "previews.json")  # a hard link: the same file as bait
    v.own()

    v.session("a-1")
    r = v.ways("settings", "set", "ways.sensors.made.rules.r", NEW_RULE)
    assert "2 hard links" in v.assert_one_line(r)  # previews.json, the first it writes
    r = v.ways("status", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["state"]["root"] == str(v.root)
    # it ends, the ledger refused (a refused state path can hold it to its idle exit)
    assert wait_until(lambda: not dispatchers(v.base), timeout=150)

    v.assert_nothing_through_a_link()
    v.assert_private()
    for out in v.out.iterdir():  # whatever was delivered, the secret was masked
        assert SECRET not in out.read_text()


def test_a_linked_sessions_folder_moves_no_session_state(victim):
    v = victim
    v.folder(".", 0o777)
    v.plant("sessions", v.bait_dir)
    v.own()
    v.session("b-1")
    assert v.ways("status").returncode == 0
    v.assert_nothing_through_a_link()
    v.assert_private()
    assert v.refused() == {"sessions": "it is a symbolic link"}
    assert not (v.out / "everything.jsonl").exists()
    assert PROMPT not in (v.root / "events.log").read_text()


# --- links at every path of a session, each in a session of its own ----------------------

SESSION_LINKS = {  # session: (path under the root, a file or a folder link)
    "c-dir": ("sessions/c-dir", "dir"),
    "c-spool": ("sessions/c-spool/spool", "dir"),
    "c-spool-lock": ("sessions/c-spool-lock/spool.lock", "file"),
    "c-segment": ("sessions/c-segment/spool/0000000001.seg", "file"),
    "c-dispatch-lock": ("sessions/c-dispatch-lock/dispatch.lock", "file"),
    "c-info": ("sessions/c-info/dispatcher.json", "file"),
    "c-build": ("sessions/c-build/build.json", "file"),
    "c-journal": ("sessions/c-journal/journal", "dir"),
    "c-journal-seg": ("sessions/c-journal-seg/journal/0000000001.seg", "file"),
    "c-cursors": ("sessions/c-cursors/cursors", "dir"),
    "c-cursor": ("sessions/c-cursor/cursors/cursors.log", "file"),
    "c-head": ("sessions/c-head/cursors/blk.r.head", "file"),
    "c-head-lock": ("sessions/c-head-lock/cursors/blk.r.lock", "file"),
    "c-ledger": ("ledger/c-ledger.json", "file"),
    "c-pending": ("pending/c-pending", "file"),
    "c-dl": ("deadletters/dl.r.jsonl", "file"),
}


def test_links_at_every_session_path_are_refused_and_logged(victim):
    v = victim
    v.folder(".", 0o777)
    for rel, kind in SESSION_LINKS.values():
        v.folder(str(Path(rel).parent))
        v.plant(rel, v.bait_dir if kind == "dir" else v.bait_file)
    v.plant("counters/files.everything.json", v.bait_file)
    sensor = v.install.user_sensors / "files.yaml"
    lock = lock_path(str(sensor), str(v.root))
    v.folder("locks")
    v.plant(str(Path(lock).relative_to(v.root)), v.bait_file)
    fifo = v.folder("sessions/c-fifo/spool") / "0000000001.seg"
    os.mkfifo(fifo)
    # a spool segment some careless tool left world-writable: repaired before it is used
    seg = v.folder("sessions/c-mode/spool") / "0000000001.seg"
    seg.write_bytes(b"")
    seg.chmod(0o666)
    v.own()

    for sid in SESSION_LINKS:
        v.session(sid)
    v.session("c-fifo")
    v.session("c-mode", end=False)
    assert wait_until(lambda: seg.stat().st_size > 0)
    assert stat.S_IMODE(seg.stat().st_mode) == 0o600

    # c-pending's dispatcher retries its consumer: a short-lived one exits owing records,
    # which is when it writes the pending marker
    build = v.root / "sessions" / "c-pending" / "build.json"
    assert wait_until(lambda: build.exists() and json.loads(build.read_text()).get("ended"))
    stop_dispatcher(v, "c-pending")
    r = v.ways("sensors", "dispatch", "--idle", "0.5", "--", "c-pending")
    # an earlier exit of this session's dispatcher may already have met the link (the
    # refusal is then in the events log, checked with every planted path below, and the
    # marker was written afresh): the command refuses in one line only if it meets it
    if r.returncode or r.stderr:
        assert ": it is a symbolic link" in v.assert_one_line(r)  # the first it meets
    r = v.ways("settings", "set", "ways.sensors.files.description", "x")
    assert "refusing" in v.assert_one_line(r)

    planted = {str(p.relative_to(v.root)) for p in v.links}
    # pending/<sid> may be met first by a dispatcher exit that replaces it (never writing
    # through it: assert_nothing_through_a_link below), so its refusal is not required
    noticed = planted - {"pending/c-pending"}
    assert wait_until(lambda: noticed <= set(v.refused()), timeout=150), noticed - set(v.refused())
    kill_dispatchers(v.base)

    v.assert_nothing_through_a_link()
    v.assert_private()
    refused = v.refused()
    assert all(refused[p] == "it is a symbolic link" for p in noticed)
    assert refused["sessions/c-fifo/spool/0000000001.seg"] == "it is not a regular file"
    repaired = {e["path"]: e["mode"] for e in v.events() if e["kind"] == "state.repaired"}
    assert repaired["."] == "0777" and repaired["sessions/c-mode/spool/0000000001.seg"] == "0666"
    log = (v.root / "events.log").read_text()
    assert SECRET not in log and "quokka" not in log  # content-free


# --- a root that is not the user's --------------------------------------------------------


def tree(base: Path, skip: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for p in base.rglob("*"):
        if skip in p.parents or p == skip:
            continue
        st = os.lstat(p)
        out[str(p)] = (st.st_size, st.st_mtime_ns)
    return out


def assert_refused_everywhere(v: Victim, why: str) -> None:
    """The hook writes nothing and says nothing; every command that writes state says
    why in one line."""
    cache = v.base / "cache"
    before = tree(v.base, cache)  # the rule index (the cache root) may be built
    v.session("d-1")
    assert wait_until(lambda: not dispatchers(v.base), timeout=5)
    for args in (
        ("status",),
        ("status", "--json"),
        ("sensors", "emit", "--section", "way_event", "--session", "d-1"),
        ("settings", "set", "ways.sensors.made.rules.r", NEW_RULE),
    ):
        r = v.run([str(Path(sys.executable).parent / "ways"), *args], b'{"kind": "fired"}')
        line = v.assert_one_line(r)
        assert f"refusing {v.root}: {why}" in line, line
    assert tree(v.base, cache) == before
    assert list(v.bait_dir.iterdir()) == []


def test_a_root_owned_by_someone_else_is_refused_in_one_line(victim):
    v = victim
    if not v.ids:  # an ordinary user cannot make a folder another user owns
        pytest.skip("needs root to give the state root to another user (CI runs as root)")
    v.folder(".", 0o777)
    v.own()
    os.chown(v.root, ATTACKER, ATTACKER)
    assert_refused_everywhere(v, f"it is owned by uid {ATTACKER}, not by you (uid {v.ids[0]})")
    assert list(v.root.iterdir()) == []


def test_a_linked_root_is_refused_in_one_line(victim):
    v = victim
    v.root.parent.mkdir(parents=True)
    v.links[v.root] = str(v.bait_dir)
    os.symlink(v.bait_dir, v.root)
    v.own()
    assert_refused_everywhere(v, "it is a symbolic link")
