"""The spool hand-off under kills and races, through the real hook and dispatcher: a
frame torn by a SIGKILLed hook never blocks the session; a session's end and its
resumption never strand a frame; owed sessions are resumed a few at a time, with
backoff per consumer, never by a herd of dispatchers."""

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

from ways_sensors.state import spool

from .conftest import LAUNCHER, payload
from .helpers import (
    SID,
    dispatcher_alive,
    held,
    lines,
    play,
    start_dispatcher,
    status,
    wait_until,
)
from .servers import Server, free_port


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


# --- owed sessions at a session start ---------------------------------------------------------


def owe(install, sids: list[str], rule: str) -> None:
    """Sessions whose dispatcher exited owing `rule` its records, as it leaves them: a
    prompt and the end in each spool, and a pending marker naming the rule."""
    from ways_sensors.state.session import Session

    for sid in sids:
        for event in ("UserPromptSubmit", "SessionEnd"):
            body = json.dumps({**payload(event), "session_id": sid}).encode()
            spool.append(
                sid, event, time.time_ns(), str(install.project), body, layout=install.layout
            )
        Session(sid, install.layout).mark_pending(True, [rule])


def remote_sensor(install, port: int) -> None:
    install.sensor(
        "remote",
        f"""\
        rules:
          r:
            sections: [user_prompt, session_end]
            delivery: at_least_once
            timeout: 1s
            dispatch: {{http: {{url: 'http://127.0.0.1:{port}/in'}}}}
        """,
    )


def resumer_running(install) -> bool:
    lock = install.state_root / "resume" / "resume.lock"
    return held(lock)


def watch_owed(install, owed: list[str], until, timeout: float = 120) -> int:
    """Sample the owed sessions' dispatch locks until `until()`; the most held at once."""
    peak = 0
    end = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < end, "the owed sessions were not settled in time"
        peak = max(peak, sum(dispatcher_alive(install, sid) for sid in owed))
        time.sleep(0.01)
    return peak


def started(install, owed: list[str]) -> list[str]:
    return [e["session"] for e in events_of(install, "dispatch.start") if e["session"] in owed]


@pytest.mark.slow
def test_a_start_retries_owed_sessions_a_few_at_a_time_and_backs_off(install, tmp_path):
    """30 sessions owe records to a consumer that is down. A session start brings no herd:
    one resumer, a few dispatchers at a time; the consumer fails again, so its rule backs
    off, the other sessions wait for it, and the next start retries nobody."""
    from ways_sensors.dispatch import resume

    remote_sensor(install, free_port())  # nobody listens
    owed = [f"owed-{i:02d}" for i in range(30)]
    owe(install, owed, "remote.r")
    play(install, ["SessionStart"], session_id="fresh-1")  # selects nothing: the fast path
    nxt = install.state_root / "resume" / "next"
    peak = watch_owed(install, owed, lambda: nxt.exists() and not resumer_running(install))
    assert 1 <= peak <= resume.SLOTS
    tried = started(install, owed)
    assert 1 <= len(tried) <= resume.SLOTS  # then the rule backed off
    assert sorted(install.layout.pending_sessions()) == owed
    backoff = json.loads((install.state_root / "resume" / "backoff.json").read_text())
    assert backoff["remote.r"]["tries"] == 1 and backoff["remote.r"]["due"] > time.time()
    play(install, ["SessionStart"], session_id="fresh-2")
    time.sleep(3)
    assert started(install, owed) == tried  # not due: nobody retried
    assert not resumer_running(install)


@pytest.mark.slow
def test_a_start_delivers_every_owed_session_a_few_at_a_time(install, tmp_path):
    from ways_sensors.dispatch import resume

    port = free_port()
    remote_sensor(install, port)
    owed = [f"owed-{i:02d}" for i in range(30)]
    owe(install, owed, "remote.r")
    server = Server("accept", port=port)
    try:
        play(install, ["SessionStart"], session_id="fresh-1")
        peak = watch_owed(install, owed, lambda: not install.layout.pending_sessions(), timeout=180)
        assert 1 <= peak <= resume.SLOTS
        got = server.wait_for(60)
        assert sorted((r["session_id"], r["section"]) for r in got) == sorted(
            (sid, section) for sid in owed for section in ("user_prompt", "session_end")
        )
        assert sorted(set(started(install, owed))) == owed  # each resumed, once
        assert len(started(install, owed)) == 30
    finally:
        server.close()
