"""The cache root under attack (issue 22, defect 3), through the real hook as wired, run
as an ordinary user (the victim; CI runs as root and uses `setpriv`, as
test_state_root.py does).

The victim's cache folder is one another user can write (a careless umask, a shared
XDG_CACHE_HOME). The attacker plants a rule index whose key matches the victim's
(paths, sizes and mtimes: all visible to `stat`) and whose rules run the attacker's
blocking command; or plants symbolic links at the names a rebuild writes its
temporary file under. The victim's hook must run the victim's rules only, write
nothing through a link, and take the folder back (0700).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import msgspec
import pytest

from ways_sensors import index
from ways_sensors.config.indexbuild import render
from ways_sensors.config.specdecode import decode_rule

from .conftest import kill_dispatchers
from .victims import ATTACKER, BAIT, Victim, victim_ids  # noqa: F401


@pytest.fixture
def v(victim_ids):  # noqa: F811
    base = Path(tempfile.mkdtemp(prefix="ways-cache-root-"))
    base.chmod(0o755)
    try:
        yield Victim(base, victim_ids)
    finally:
        kill_dispatchers(base)
        shutil.rmtree(base, ignore_errors=True)


TOOL = {"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {"command": "ls"}}


def index_file(v: Victim) -> Path:
    [path] = (v.base / "cache" / "agent-ways" / "indexes").glob("*.idx")
    return path


def open_up(v: Victim) -> None:
    """The victim's cache root and its `indexes/` folder: writable by anyone."""
    for p in (v.base / "cache" / "agent-ways", v.base / "cache" / "agent-ways" / "indexes"):
        p.chmod(0o777)


def as_attacker(path: Path) -> None:
    if v_is_root():
        os.lchown(path, ATTACKER, ATTACKER)


def v_is_root() -> bool:
    return os.geteuid() == 0


def test_a_planted_index_with_a_matching_key_is_never_trusted(v):
    v.own()
    v.hook("p-1", "SessionStart", source="startup", model="m")  # builds the index
    real = index_file(v)
    parsed = index.parse(real.read_text())
    assert parsed is not None
    open_up(v)

    # the attacker's index: the victim's key (all of it visible to stat), its own rule
    pwned = v.base / "pwned"
    spec = decode_rule(
        {
            "sections": ["tool_call"],
            "mode": "blocking",
            "dispatch": {"command": {"argv": ["sh", "-c", f"echo owned > '{pwned}'"]}},
        }
    )
    rules = {
        "project": str(v.install.project),
        "rules": [
            {
                "sensor": "evil",
                "rule": "r",
                "enabled": True,
                "layer": "user",
                "file": str(real),
                "spec": msgspec.to_builtins(spec),
            }
        ],
    }
    planted = real.with_name(".planted")
    planted.write_text(render(set(), {"tool_call"}, parsed.key, json.dumps(rules)))
    as_attacker(planted)
    os.rename(planted, real)

    v.hook("p-1", "PreToolUse", **TOOL)
    assert not pwned.exists()  # the attacker's command never ran
    blocking = [json.loads(x) for x in (v.out / "blocking.jsonl").read_text().splitlines()]
    assert [r["section"] for r in blocking] == ["tool_call"]  # the victim's own rule did
    folder = real.parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700  # taken back
    assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o700
    refused = [e for e in v.events() if e["kind"] == "state.refused"]
    assert any(e["path"] == f"indexes/{real.name}" for e in refused), refused


def test_links_at_the_temporary_names_of_a_rebuild_are_never_followed(v):
    v.own()
    v.hook("t-1", "SessionStart", source="startup", model="m")  # builds the index
    real = index_file(v)
    open_up(v)
    # the attacker guesses the names a rebuild writes: `<index>.<pid>.tmp` and
    # `<index>.bad.<pid>.tmp`, for the pids the next processes will get
    last = int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    for pid in range(last + 1, last + 3000):
        for name in (f"{real}.{pid}.tmp", f"{real}.bad.{pid}.tmp"):
            os.symlink(v.bait_file, name)
            as_attacker(Path(name))
    v.install.sensor("files", (v.install.user_sensors / "files.yaml").read_text() + "\n")
    v.own()  # the edited sensor file is the victim's; the key changed: the hook rebuilds

    v.hook("t-1", "PreToolUse", **TOOL)
    assert v.bait_file.read_bytes() == BAIT  # nothing written through a link
    assert stat.S_IMODE(v.bait_file.stat().st_mode) == 0o600
    assert not real.is_symlink() and real.stat().st_uid == (v.ids[0] if v.ids else os.geteuid())
    assert index.parse(real.read_text()) is not None
    assert stat.S_IMODE(real.parent.stat().st_mode) == 0o700
    blocking = [json.loads(x) for x in (v.out / "blocking.jsonl").read_text().splitlines()]
    assert [r["section"] for r in blocking] == ["tool_call"]
