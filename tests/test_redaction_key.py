"""The redaction key is never empty, never differs between processes, and is never used
when it is wrong: real processes race for the first use, planted files are refused."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ways_sensors import redact
from ways_sensors.redact import key as keymod

from .conftest import payload
from .helpers import SID, wait_until

A36 = "Zq4vB7nK2mXc9LpQ1rSt5UwYaD3eF6gH8jKl"

# Each child imports once, then per round: reads the round's state root from stdin (all
# twenty are blocked on that read, so writing the twenty lines releases them together),
# takes the key there at once and prints it. Against the old create-then-write key,
# each of five runs of forty rounds had a round that gave some child an empty key.
CHILD = """
import posix, sys
from ways_sensors.redact import install_key
print("ready", flush=True)
for line in sys.stdin:
    posix.environ[b"XDG_STATE_HOME"] = line.strip().encode()
    print(install_key().hex(), flush=True)
"""
ROUNDS = 40


def key_file(state: Path) -> Path:
    return state / "agent-ways" / "redaction.key"


def test_twenty_concurrent_first_uses_get_one_complete_key(tmp_path):
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD],
            env=os.environ.copy(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(20)
    ]
    try:
        for c in children:
            assert c.stdout.readline().strip() == "ready"
        for r in range(ROUNDS):
            state = tmp_path / f"state{r}"
            for c in children:
                c.stdin.write(f"{state}\n")
                c.stdin.flush()
            keys = [c.stdout.readline().strip() for c in children]
            on_disk = key_file(state).read_bytes()
            assert len(on_disk) == 32 and on_disk != bytes(32)
            assert set(keys) == {on_disk.hex()}, f"round {r}: {sorted(map(len, keys))}"
            assert stat.S_IMODE(key_file(state).stat().st_mode) == 0o600
            assert [p.name for p in key_file(state).parent.iterdir()] == ["redaction.key"]
    finally:
        for c in children:
            c.kill()
            c.communicate()  # reaps it and closes its pipes


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    keymod._cache.clear()
    folder = tmp_path / "state" / "agent-ways"
    folder.mkdir(parents=True, mode=0o700)
    return folder


def refused(folder: Path, reason: str) -> None:
    """The key is refused with a one-line reason everywhere it would be used."""
    with pytest.raises(redact.KeyRefused) as exc:
        redact.install_key()
    message = str(exc.value)
    assert reason in message and "\n" not in message
    with pytest.raises(redact.KeyRefused):
        redact.mask_text(f"push ghp_{A36}")
    assert redact.key_status() == f"refused: {message}"


def test_a_planted_empty_key_is_refused_not_used(state):
    """What a crash between creating and writing the old key left behind."""
    (state / "redaction.key").write_bytes(b"")
    (state / "redaction.key").chmod(0o600)
    refused(state, "holds 0 bytes, not 32")
    assert (state / "redaction.key").read_bytes() == b""  # refused, never replaced


@pytest.mark.parametrize("size", [31, 33])
def test_a_key_of_the_wrong_length_is_refused(state, size):
    (state / "redaction.key").write_bytes(b"k" * size)
    (state / "redaction.key").chmod(0o600)
    refused(state, "bytes, not 32")


def test_a_0644_key_of_ours_is_repaired_and_used(state):
    """A restore left it 0644: ours, so repaired to 0600 (as the state root is) and
    used, the same key: tokens do not change."""
    key = os.urandom(32)
    (state / "redaction.key").write_bytes(key)
    (state / "redaction.key").chmod(0o644)
    assert redact.install_key() == key
    assert stat.S_IMODE((state / "redaction.key").stat().st_mode) == 0o600
    assert redact.key_status() == "ok"


def test_a_loose_key_with_a_second_link_is_refused(state, tmp_path):
    key = state / "redaction.key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o640)
    os.link(key, tmp_path / "alias")
    refused(state, "2 links")
    assert stat.S_IMODE(key.stat().st_mode) == 0o640


def test_a_symlinked_key_is_refused_and_its_target_untouched(state, tmp_path):
    target = tmp_path / "attacker-chosen"
    target.write_bytes(b"a" * 32)
    target.chmod(0o600)
    (state / "redaction.key").symlink_to(target)
    refused(state, "is a symlink")
    assert target.read_bytes() == b"a" * 32


def test_a_dangling_symlink_is_refused_not_followed_to_create(state, tmp_path):
    (state / "redaction.key").symlink_to(tmp_path / "elsewhere")
    refused(state, "is a symlink")
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_key_that_is_not_a_regular_file_is_refused(state, kind):
    path = state / "redaction.key"
    if kind == "folder":
        path.mkdir(mode=0o700)
    else:
        os.mkfifo(path, 0o600)  # opened non-blocking: refusing it must not hang
    refused(state, "not a regular file")


def test_a_key_owned_by_someone_else_is_refused(state, monkeypatch):
    path = state / "redaction.key"
    path.write_bytes(os.urandom(32))
    path.chmod(0o600)
    if os.geteuid() == 0:
        os.chown(path, 65534, 65534)  # nobody's file in root's state folder
    else:  # an unprivileged run cannot give a file away: be someone else instead
        monkeypatch.setattr(keymod.os, "geteuid", lambda: os.getuid() + 1)
    refused(state, "is owned by uid")


def test_status_says_missing_then_ok_and_creates_nothing(state):
    assert redact.key_status() == "missing (created on first use)"
    assert not (state / "redaction.key").exists()
    key = redact.install_key()
    assert len(key) == 32 and redact.key_status() == "ok"


def test_a_crash_mid_creation_leaves_no_partial_key(state):
    """A first use killed after writing its temporary file leaves only that file; the key
    name never holds a partial key, and the next use creates a complete one."""
    leftover = state / ".redaction.key.4242.a1b2c3d4e5f6.tmp"
    leftover.write_bytes(b"half")
    key = redact.install_key()
    assert len(key) == 32 and (state / "redaction.key").read_bytes() == key
    assert leftover.read_bytes() == b"half"  # another process's temporary: not ours to judge


def test_sigkill_during_first_uses_never_leaves_a_short_key(tmp_path):
    """Processes killed at random points of their first use: whatever is left at the
    key's name is a complete 32-byte key, or nothing."""
    state = tmp_path / "state"
    env = {**os.environ, "XDG_STATE_HOME": str(state)}
    code = "from ways_sensors.redact import install_key; install_key()"
    for delay in (0.0, 0.02, 0.05, 0.08, 0.12, 0.2):
        procs = [
            subprocess.Popen([sys.executable, "-c", code], env=env, stderr=subprocess.DEVNULL)
            for _ in range(4)
        ]
        time.sleep(delay)
        for p in procs:
            p.kill()
            p.wait()
        path = key_file(state)
        if path.exists():
            assert len(path.read_bytes()) == 32
            break
    result = subprocess.run(
        [sys.executable, "-c", "from ways_sensors import redact; print(redact.key_status())"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.stdout.strip() in ("ok", "missing (created on first use)")


def test_the_dispatcher_drops_a_record_it_cannot_mask_with_a_refused_key(install):
    """Through the real hook and dispatcher: with an empty key planted, a record holding a
    secret is dropped (counted, logged with the refusal's class), never sent unmasked or
    with a guessable token; a record without a secret still goes."""
    install.state_root.mkdir(parents=True, mode=0o700)
    (install.state_root / "redaction.key").write_bytes(b"")
    (install.state_root / "redaction.key").chmod(0o600)
    out = install.root / "out.jsonl"
    install.sensor(
        "keyed",
        f"""\
        rules:
          all:
            sections: [tool_call]
            dispatch: {{file: {{path: '{out}'}}}}
        """,
    )
    install.hook({**payload("PreToolUse"), "tool_input": {"command": f"push ghp_{A36}"}})
    install.hook({**payload("PreToolUse"), "tool_input": {"command": "ls -la"}})
    install.hook(payload("SessionEnd"))
    assert wait_until(lambda: not (install.sessions() / SID).exists(), timeout=60)
    assert wait_until(out.exists, timeout=30)
    assert A36 not in out.read_text()
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["data"]["input"]["command"] for r in lines] == ["ls -la"]
    log = (install.state_root / "events.log").read_text()
    assert "KeyRefused" in log


def test_ways_status_names_the_key_state(install):
    """`ways status` says whether the key is usable, and why not, without creating it."""
    r = install.ways("status", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["redaction_key"] == "missing (created on first use)"
    key = install.state_root / "redaction.key"
    key.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key.write_bytes(b"")
    key.chmod(0o600)
    r = install.ways("status")
    assert r.returncode == 0, r.stderr
    line = [x for x in r.stdout.splitlines() if x.startswith("redaction key:")]
    assert line and "refused" in line[0], r.stdout
    assert key.read_bytes() == b""  # reported, never replaced
