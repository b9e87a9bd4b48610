"""The short-string memo of redact.find: exact, bounded, and still under the deadline."""

import time

import pytest

from ways_sensors import redact
from ways_sensors.redact import scan

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_a_repeated_short_string_is_looked_up_not_rescanned(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    redact._find_short.cache_clear()
    record = {"session_id": "s-1", "cwd": "/home/dev/project", "data": {"cmd": f"x {SECRET}"}}
    first = redact.mask_record(record)
    hits = redact._find_short.cache_info().hits
    second = redact.mask_record(record)
    assert redact._find_short.cache_info().hits > hits  # remembered ...
    assert second == first  # ... and the same answer: the secret masked both times
    assert SECRET not in str(second) and second["redactions"][0]["path"] == "data.cmd"


def test_the_memo_is_bounded_in_entries_and_length():
    redact._find_short.cache_clear()
    long = "x " * (redact.SHORT // 2 + 1) + SECRET
    assert redact.find(long)  # found, by a scan of its own ...
    assert redact._find_short.cache_info().currsize == 0  # ... never remembered
    for i in range(redact.REMEMBERED + 50):
        redact.find(f"string number {i:08d}")
    assert redact._find_short.cache_info().currsize == redact.REMEMBERED


def test_a_remembered_string_still_honours_the_deadline():
    redact.find("a remembered clean string")
    with pytest.raises(redact.MaskTimeout):
        redact.find("a remembered clean string", deadline=time.monotonic() - 1)


def test_a_measured_scan_is_never_answered_from_the_memo():
    text = f"token {SECRET} here"
    redact.find(text)
    with scan.measure() as work:
        redact.find(text)
    assert work.strings == 1 and work.total > 0
