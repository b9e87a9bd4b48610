"""A session that crosses midnight, recorded by the shipped `audit` sensor through the
real hook and dispatcher running under a moved clock (Debian's `faketime`; set-up
installs it), then verified across its dated files and tampered with.

`{date}` is each record's own UTC date, so crossing UTC midnight splits the session's
chain over two days' files, and the records recovered from the transcript (the queued
message, the interrupted reply) go to the transcript's own date: three files, one
chain, intact. Crossing local midnight away from UTC's keeps the hook's records in one
UTC day."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import LAUNCHER
from .helpers import dispatcher_done, no_checkpoints, wait_until
from .sessions import SID, ScriptedSession

TRANSCRIPT_DAY = "2026-10-06"  # sessions.py writes the transcript's lines on that day


class MovedClock:
    """Runs the wired hook as `install.hook` does, under faketime at a chosen local time
    (the dispatcher it starts inherits the moved clock)."""

    def __init__(self, install, tz: str):
        self.install = install
        self.project = install.project
        self.env = {**install.env, "TZ": tz}
        self.at = ""

    def hook(self, payload: dict) -> subprocess.CompletedProcess:
        from ways_sensors.commands.reconcile import hook_command

        assert shutil.which("faketime"), "faketime is missing: scripts/setup.sh installs it"
        argv = ["faketime", self.at, "sh", "-c", hook_command(sys.executable, str(LAUNCHER))]
        return subprocess.run(
            argv,
            env=self.env,
            input=json.dumps(payload).encode(),
            capture_output=True,
            timeout=60,
            cwd=self.project,
        )


class Crossing(ScriptedSession):
    """The scripted session, its first half before midnight and the rest after."""

    def __init__(self, clock: MovedClock, folder: Path, before: str, after: str):
        super().__init__(clock, folder)
        self.clock, self.before, self.after, self.events = clock, before, after, 0

    def hook(self, event: str, **fields) -> None:
        self.events += 1
        self.clock.at = self.before if self.events <= 6 else self.after
        super().hook(event, **fields)


def record(install, tz: str, before: str, after: str) -> Path:
    install.sensor("audit", "enabled: true\n")
    clock = MovedClock(install, tz)
    Crossing(clock, install.root / "transcripts", before, after).play()
    assert wait_until(lambda: dispatcher_done(install, SID), timeout=90)
    return install.home / "agent-audit"


def verify(install, *args: str) -> tuple[int, dict]:
    r = install.ways("sensors", "verify", *args, "--json")
    return r.returncode, json.loads(r.stdout)


def days(root: Path) -> dict[str, Path]:
    return {p.parent.name: p for p in sorted(root.glob(f"*/{SID}.jsonl"))}


@pytest.fixture
def utc_midnight(install):
    root = record(install, "UTC", "2026-11-29 23:59:57", "2026-11-30 00:00:03")
    files = days(root)
    assert sorted(files) == [TRANSCRIPT_DAY, "2026-11-29", "2026-11-30"]
    return install, root, files


def test_a_session_across_utc_midnight_verifies_as_intact(utc_midnight):
    install, root, files = utc_midnight
    code, data = verify(install, "--rule", "audit/all")
    assert code == 0, data["breaks"]
    assert sorted(f["file"] for f in data["files"]) == sorted(str(p) for p in files.values())
    total = sum(c["records"] for f in data["files"] for c in f["chains"])
    assert total == 15  # sessions.EXPECTED: every record, once, in some file
    code, data = verify(install, str(root))
    assert code == 0, data["breaks"]
    code, data = verify(install, *map(str, files.values()))
    assert code == 0, data["breaks"]
    for path in files.values():  # each file alone: its chain goes on elsewhere
        r = install.ways("sensors", "verify", str(path))
        assert r.returncode == 0, r.stdout
        assert "continues in" in r.stdout or "continues from" in r.stdout, r.stdout
        assert "broken" not in r.stdout
        code, data = verify(install, str(path), "--rule", "audit/all")
        assert code == 0, data["breaks"]


def test_a_session_across_local_midnight_stays_in_one_utc_day(install):
    root = record(install, "Asia/Tokyo", "2026-11-29 23:59:57", "2026-11-30 00:00:03")
    files = days(root)
    assert sorted(files) == [TRANSCRIPT_DAY, "2026-11-29"]  # 14:59:57 and 15:00:03 UTC
    code, data = verify(install, "--rule", "audit/all")
    assert code == 0, data["breaks"]


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines()


def put(path: Path, lines: list[str]) -> None:
    path.write_text("".join(x + "\n" for x in lines))


@pytest.mark.parametrize("how", ["edit", "delete", "reorder", "truncate"])
def test_tampering_with_any_dated_file_is_caught_naming_file_and_line(utc_midnight, how):
    install, root, files = utc_midnight
    for day, path in files.items():
        original = lines_of(path)
        changed = no_checkpoints(original)  # the records (the signed checkpoints aside)
        if how == "edit":
            rec = json.loads(changed[0])
            rec["timestamp"] = rec["timestamp"].replace("Z", "1Z")  # always a change
            changed[0] = json.dumps(rec)
            line = 1
        elif how == "delete":
            if len(changed) < 3:
                continue
            del changed[1]
            line = 2
        elif how == "reorder":
            if len(changed) < 2:
                continue
            changed[0], changed[1] = changed[1], changed[0]
            line = 0  # named at the first or the second line: either is the swap
        else:
            changed = changed[:-1]
            line = None
        put(path, changed)
        checks: list[tuple[str, ...]] = [("--rule", "audit/all"), (str(root),)]
        if how == "truncate" and day == max(files):
            checks = checks[:1]  # the session's last record: only its stored head knows it
        for args in checks:
            code, data = verify(install, *args)
            assert code == 3, (day, how, args)
            named = {(b["file"], b["line"]) for b in data["breaks"]}
            if line == 0:
                assert named & {(str(path), 1), (str(path), 2)}, (day, how, data["breaks"])
            elif line is not None:
                assert (str(path), line) in named, (day, how, data["breaks"])
            else:  # the cut tail: named at this file's end, or where the chain went on
                assert any(f for f, _ in named), (day, how, data["breaks"])
        put(path, original)
    assert verify(install, "--rule", "audit/all")[0] == 0
