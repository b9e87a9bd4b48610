"""The file target: whole lines, placeholders, private folders, json and text."""

from __future__ import annotations

import json
import stat
import threading
import time

from ways_sensors.spec import FileTarget
from ways_sensors.targets import DELIVERED, ERROR
from ways_sensors.targets import file as target

REC = {
    "section": "tool_call",
    "timestamp": "2026-11-29T11:40:02.123Z",
    "rule_seq": 4,
    "agent_type": "main",
    "agent_id": None,
    "data": {"tool_name": "Bash", "input": {"command": "ls\n-la"}},
}
LINE = json.dumps(REC).encode()
CTX = {"session_id": "s1", "date": "2026-11-29", "sensor": "audit", "rule": "all"}


def test_placeholders_folders_and_modes(tmp_path):
    spec = FileTarget(path=str(tmp_path / "{date}" / "{sensor}-{rule}-{session_id}.jsonl"))
    assert target.deliver(spec, REC, LINE, CTX, time.monotonic() + 1).status == DELIVERED
    path = tmp_path / "2026-11-29" / "audit-all-s1.jsonl"
    assert json.loads(path.read_text()) == REC
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_home_expansion(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    spec = FileTarget(path="~/logs/x.jsonl")
    assert target.deliver(spec, REC, LINE, CTX, time.monotonic() + 1).status == DELIVERED
    assert (tmp_path / "logs" / "x.jsonl").exists()


def test_text_format_is_one_readable_line(tmp_path):
    spec = FileTarget(path=str(tmp_path / "t.log"), format="text")
    target.deliver(spec, REC, LINE, CTX, time.monotonic() + 1)
    text = (tmp_path / "t.log").read_text()
    assert text.count("\n") == 1
    assert text.startswith("2026-11-29T11:40:02.123Z #4 tool_call main Bash")
    assert "ls\\n-la" in text


def test_concurrent_writers_never_interleave(tmp_path):
    spec = FileTarget(path=str(tmp_path / "c.jsonl"))
    big = {"data": "y" * 100_000}
    line = json.dumps(big).encode()

    def write():
        for _ in range(20):
            target.deliver(spec, big, line, CTX, time.monotonic() + 5)

    threads = [threading.Thread(target=write) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (tmp_path / "c.jsonl").read_text().splitlines()
    assert len(lines) == 160 and all(json.loads(x) == big for x in lines)


def test_unwritable_path_is_an_error(tmp_path):
    (tmp_path / "f").write_text("a file, not a folder")
    spec = FileTarget(path=str(tmp_path / "f" / "x.jsonl"))
    assert target.deliver(spec, REC, LINE, CTX, time.monotonic() + 1).status == ERROR
