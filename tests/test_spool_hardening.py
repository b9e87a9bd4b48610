"""The spool hand-off under kills and races, through the real hook and dispatcher: a
frame torn by a SIGKILLed hook never blocks the session; a session's end and its
resumption never strand a frame."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ways_sensors import spool

from .conftest import LAUNCHER, payload
from .test_dispatcher import (
    SID,
    lines,
    play,
    start_dispatcher,
    status,
    wait_until,
)


def events_of(install, kind: str) -> list[dict]:
    path = install.state_root / "events.log"
    if not path.exists():
        return []
    out = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [e for e in out if e["kind"] == kind]


def tool_call(n: int, **extra) -> dict:
    return {**payload("PreToolUse"), "tool_use_id": f"toolu_mark{n:04d}", **extra}


def ids(out: Path) -> list[str]:
    return [r["data"]["tool_use_id"] for r in lines(out) if r["section"] == "tool_call"]


def file_sensor(install, out: Path, sections: str = "[tool_call, session_end]") -> None:
    install.sensor(
        "f", f"rules:\n  r:\n    sections: {sections}\n    dispatch: {{file: {{path: '{out}'}}}}\n"
    )


# --- a torn frame --------------------------------------------------------------------------


def torn_at(seg: Path, start: int) -> bool:
    """Whether the frame at `start` of `seg` promises more bytes than the file holds."""
    data = seg.read_bytes()[start:]
    head, nl, _ = data.partition(b"\n")
    assert head.startswith(b"WS1 ") and nl, head[:40]
    return start + len(head) + 1 + int(head[4:]) + 1 > seg.stat().st_size


def kill_hook_mid_write(install, tmp_path: Path, size: int = 48 << 20) -> int:
    """Run the wired hook with a payload of `size` bytes and SIGKILL it while it writes
    its frame: the test polls the spool segment it writes and kills it as soon as that
    grows. A kill that lands after the write finished leaves a whole frame (delivered
    like any other): try again. Returns how many tries it took."""
    from ways_sensors.commands.reconcile import hook_command

    body = tmp_path / "big.json"
    big = {"hook_event_name": "PreToolUse", **tool_call(9999)}
    big["tool_input"] = {"command": "x" * size}
    body.write_text(json.dumps(big))
    folder = install.sessions() / SID / "spool"
    for attempt in range(1, 21):
        newest = max(folder.glob("*.seg"))
        watch = [newest, newest.with_name("%010d.seg" % (int(newest.name[:10]) + 1))]
        sizes = [p.stat().st_size if p.exists() else 0 for p in watch]
        with body.open("rb") as stdin:
            proc = subprocess.Popen(
                ["sh", "-c", hook_command(sys.executable, str(LAUNCHER))],
                stdin=stdin,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=install.env,
                cwd=install.project,
            )
        grown = None
        while grown is None and proc.poll() is None:
            for path, before in zip(watch, sizes, strict=True):
                try:
                    if os.stat(path).st_size > before:
                        os.kill(proc.pid, signal.SIGKILL)
                        grown = (path, before)
                        break
                except FileNotFoundError:
                    pass
        proc.wait()
        if grown and torn_at(*grown):
            return attempt
    raise AssertionError("no kill landed inside the hook's write in 20 tries")


def test_a_hook_killed_mid_write_never_blocks_the_session(install, tmp_path):
    install.config("ways:\n  dispatch_idle_seconds: 60\n")
    out = tmp_path / "o.jsonl"
    file_sensor(install, out)
    play(install, ["PreToolUse"])
    assert wait_until(lambda: len(lines(out)) == 1)
    kill_hook_mid_write(install, tmp_path)
    for n in (1, 2):
        r = install.hook(tool_call(n))
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert wait_until(lambda: {"toolu_mark0001", "toolu_mark0002"} <= set(ids(out)), timeout=30)
    assert ids(out)[-2:] == ["toolu_mark0001", "toolu_mark0002"]  # in order
    assert wait_until(lambda: events_of(install, "dispatch.torn_spool_frame"))
    [torn] = events_of(install, "dispatch.torn_spool_frame")
    assert torn["session"] == SID and torn["bytes"] > 0
    assert status(install)["spool_faults"] == {"torn": 1, "corrupt": 0}
    assert "xxxxxxxx" not in (install.state_root / "events.log").read_text()


def write_torn_frame(install, cut: int) -> None:
    """What a writer SIGKILLed after `cut` bytes of its frame leaves: a prefix, and no
    commit record for it (spool.lock keeps the previous writer's)."""
    data = spool.frame("PreToolUse", time.time_ns(), str(install.project), b"{" + b"y" * 500)
    seg = max((install.sessions() / SID / "spool").glob("*.seg"))
    with seg.open("ab") as f:
        f.write(data[:cut])


def test_a_small_torn_frame_costs_no_later_frame(install, tmp_path):
    """The small case: the next writer must not append behind a torn header (the old
    reader then took the next frame for the torn one's rest and lost it)."""
    install.config("ways:\n  dispatch_idle_seconds: 60\n")
    out = tmp_path / "o.jsonl"
    file_sensor(install, out)
    spool.append(
        SID,
        "PreToolUse",
        time.time_ns(),
        str(install.project),
        json.dumps(tool_call(1)).encode(),
        layout=install.layout,
    )
    write_torn_frame(install, cut=40)
    for n in (2, 3):
        r = install.hook(tool_call(n))  # starts the dispatcher, then appends behind it
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert wait_until(lambda: len(ids(out)) == 3, timeout=30)
    assert ids(out) == ["toolu_mark0001", "toolu_mark0002", "toolu_mark0003"]
    assert wait_until(lambda: status(install)["spool_faults"]["torn"] == 1)
    [torn] = events_of(install, "dispatch.torn_spool_frame")
    assert torn["bytes"] == 40


def test_a_torn_last_frame_is_sealed_by_the_dispatcher(install, tmp_path):
    """No writer comes after the torn frame: the dispatcher, holding spool.lock, finds
    no live writer, seals and skips it, and the ended session drains and leaves."""
    out = tmp_path / "o.jsonl"
    file_sensor(install, out)
    for event, body in (("PreToolUse", tool_call(1)), ("SessionEnd", payload("SessionEnd"))):
        spool.append(
            SID,
            event,
            time.time_ns(),
            str(install.project),
            json.dumps(body).encode(),
            layout=install.layout,
        )
    write_torn_frame(install, cut=300)
    start_dispatcher(install).wait(timeout=60)
    assert [r["section"] for r in lines(out)] == ["tool_call", "session_end"]
    assert not (install.sessions() / SID).exists()  # drained: not kept waiting for bytes
    [exit_] = events_of(install, "dispatch.exit")
    assert exit_["reason"] == "session_end"
    assert status(install)["spool_faults"]["torn"] == 1


def test_frames_of_an_older_writer_are_still_read(install, tmp_path):
    """Segments written before the commit record existed (spool.lock empty): a new
    writer cannot vouch for their end, seals them, and every frame is delivered."""
    out = tmp_path / "o.jsonl"
    file_sensor(install, out)
    folder = install.sessions() / SID / "spool"
    folder.mkdir(parents=True)
    os.chmod(install.sessions() / SID, 0o700)
    old = b"".join(
        spool.frame(
            "PreToolUse", time.time_ns(), str(install.project), json.dumps(tool_call(n)).encode()
        )
        for n in range(1, 31)
    )
    (folder / "0000000001.seg").write_bytes(old)
    (install.sessions() / SID / "spool.lock").write_bytes(b"")
    r = install.hook(tool_call(31))
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert wait_until(lambda: len(ids(out)) == 31, timeout=30)
    assert ids(out) == [f"toolu_mark{n:04d}" for n in range(1, 32)]
    assert status(install)["spool_faults"] == {"torn": 0, "corrupt": 0}


# --- the hand-off and the dispatcher's exit ---------------------------------------------------


@pytest.mark.slow
def test_an_end_and_an_immediate_resume_never_strand_a_frame(install, tmp_path):
    """100 trials of SessionEnd, then at once the resumed session's events. The
    dispatcher that drains the end leaves while the resumed session's hooks append: each
    of their frames must be seen by it, or find its lock free and start another. Twenty
    extra rules on `session_end` widen the exit (the leaving dispatcher stops twenty
    workers) that a hook can race."""
    install.config("ways:\n  dispatch_idle_seconds: 30\n")
    out = tmp_path / "o.jsonl"
    extra = "".join(
        f"  e{i}:\n    sections: [session_end]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/e{i}.jsonl'}}}}\n"
        for i in range(20)
    )
    install.sensor(
        "f",
        "rules:\n  r:\n    sections: [session_start, user_prompt, session_end]\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n" + extra,
    )
    play(install, ["SessionStart"])
    rnd = random.Random(20261130)

    def prompts() -> list[str]:
        return [r["data"]["prompt"] for r in lines(out) if r["section"] == "user_prompt"]

    for trial in range(100):
        play(install, ["SessionEnd"])
        time.sleep(rnd.uniform(0, 0.03))
        play(install, ["SessionStart"], source="resume")
        play(install, ["UserPromptSubmit"], prompt=f"trial {trial}")
        assert wait_until(lambda t=trial: f"trial {t}" in prompts(), timeout=20), (
            f"trial {trial}: the resumed prompt was stranded"
        )
    assert prompts() == [f"trial {t}" for t in range(100)]
