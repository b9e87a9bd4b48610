"""`ways sensors tap`: a live session's records for a rule, as they are delivered, masked."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..conftest import payload
from ..helpers import no_checkpoints

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _wait(pred, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def test_tap_shows_a_rules_records_as_delivered_and_changes_nothing(install, tmp_path):
    out = tmp_path / "out.jsonl"
    other = tmp_path / "other.jsonl"
    install.sensor(
        "team",
        f"""\
        rules:
          calls:
            sections: [tool_call]
            chain: true
            dispatch: {{file: {{path: '{out}'}}}}
          starts:
            sections: [session_start]
            dispatch: {{file: {{path: '{other}'}}}}
        """,
    )
    exe = str(Path(sys.executable).parent / "ways")
    tap = subprocess.Popen(
        [exe, "sensors", "tap", "team/calls"],
        env=install.env,
        cwd=install.project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    lines: list[bytes] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(tap.stdout.readline, b"")))
    try:
        assert tap.stderr is not None and tap.stdout is not None
        assert b"tapping team/calls" in tap.stderr.readline()
        reader.start()
        start = payload("SessionStart")
        call = payload("PreToolUse")
        call["tool_input"] = {"command": f"git push https://x:{SECRET}@example.com/r.git"}
        second = {**call, "tool_use_id": "toolu_tap_2", "tool_input": {"command": "ls"}}
        for p in (start, call, second):
            assert install.hook(p).returncode == 0
        records = lambda: no_checkpoints(out.read_bytes().splitlines())  # noqa: E731
        assert _wait(lambda: out.exists() and len(records()) == 2)
        delivered = out.read_bytes().splitlines()  # each batch ends with its checkpoint
        assert _wait(lambda: len(lines) == len(delivered)), lines
        # exactly the bytes the target got: numbered, masked, chained, checkpointed
        assert [ln.rstrip(b"\n") for ln in lines] == delivered
        assert SECRET.encode() not in b"".join(lines)
        tapped = no_checkpoints([ln.rstrip(b"\n") for ln in lines])
        assert b"[REDACTED:" in tapped[0]
        assert [json.loads(ln)["rule_seq"] for ln in tapped] == [1, 2]
        # another rule's records are not tapped
        assert _wait(lambda: other.exists())
        assert all(json.loads(ln)["rule"] == "calls" for ln in lines)
    finally:
        tap.send_signal(signal.SIGINT)
        code = tap.wait(timeout=30)
        if reader.ident is not None:
            reader.join(timeout=10)
        tap.stdout.close()
        tap.stderr.close()
    assert code == 0
    # the tap removed its files when it ended
    assert list((install.state_root / "taps").iterdir()) == []

    # the counters count each record once: the tap adds no delivery and no attempt
    def counters():
        status = json.loads(install.ways("status", "--json").stdout)
        return next(r["counters"] for r in status["rules"] if r["rule"] == "team/calls")

    assert _wait(lambda: counters().get("delivered") == 2), counters()
    assert counters().get("dispatched") == 2, counters()


def test_tap_of_an_unknown_rule_is_refused(install):
    r = install.ways("sensors", "tap", "nope/rule")
    assert r.returncode == 2 and "no rule or sensor 'nope/rule'" in r.stderr
