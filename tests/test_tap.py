"""services/tap.py in-process: offers reach only live taps of the rule, a stopped
tap's file stays bounded (drops logged), and a dead tap's files are swept."""

from __future__ import annotations

import json
import os

from ways_sensors.services import tap
from ways_sensors.state import taps


def test_offer_reaches_the_rule_and_its_sensor_and_stays_bounded(tmp_path, monkeypatch):
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    monkeypatch.setattr(taps, "_seen", (-1e9, {}))
    monkeypatch.setattr(taps, "TAP_CAP", 20)
    t = tap.Tap(["team/calls", "other"], str(state))
    try:
        taps.offer("team/calls", [b'{"n":1}'], str(state))
        taps.offer("team/prompts", [b'{"n":2}'], str(state))  # not tapped
        taps.offer("other/any", [b'{"n":3}'], str(state))  # its sensor is
        got = os.pread(t.fd, 1 << 16, 0)
        assert got == b'{"n":1}\n{"n":3}\n'
        taps.offer("team/calls", [b'{"n":4}'], str(state))  # 24 bytes unread > 20
        taps.offer("team/calls", [b'{"n":5}'], str(state))  # dropped: the cap
        assert os.pread(t.fd, 1 << 16, 0) == got + b'{"n":4}\n'
        log = (tmp_path / "agent-ways" / "events.log").read_text().splitlines()
        dropped = [json.loads(x) for x in log if "tap.dropped" in x]
        assert dropped and dropped[0]["rule"] == "team/calls" and dropped[0]["records"] == 1
        lines = []
        for line in t.records(lambda: len(lines) >= 3):
            lines.append(line)
        assert lines == [b'{"n":1}', b'{"n":3}', b'{"n":4}']
        assert os.fstat(t.fd).st_size == 0  # read and truncated
    finally:
        t.close()
    assert not list((state / "taps").iterdir())


def test_a_dead_taps_files_are_swept_and_never_offered_to(tmp_path, monkeypatch):
    state = tmp_path / "state"
    where = state / "taps"
    where.mkdir(parents=True, mode=0o700)
    dead = 2**22 + 12345  # above pid_max's default: no such process
    (where / f"{dead}.tap").write_text(json.dumps({"pid": dead, "rules": ["a/b"]}))
    (where / f"{dead}.jsonl").write_text("")
    monkeypatch.setattr(taps, "_seen", (-1e9, {}))
    taps.offer("a/b", [b"{}"], str(state))
    assert (where / f"{dead}.jsonl").read_text() == ""  # not a live tap: nothing written
    t = tap.Tap(["a/b"], str(state))
    t.close()
    assert not list(where.iterdir())  # swept by the next tap to start
