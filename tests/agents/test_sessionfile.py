"""The agent kit's session-file reader (agents/kit/sessionfile.py): bounded per call in
bytes and time, regular files only, for every agent that reads one."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from ways_sensors.agents.codex import rollout
from ways_sensors.agents.codex.builder import Builder as CodexBuilder
from ways_sensors.agents.gemini import chats
from ways_sensors.agents.gemini.builder import Builder as GeminiBuilder
from ways_sensors.agents.kit import sessionfile as t


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def _returns(call, timeout: float = 30.0):
    """call()'s result; fails when it has not returned in `timeout` seconds (a read
    that waits on a FIFO for a writer never does)."""
    out: list = []

    def run() -> None:
        try:
            out.append((call(), None))
        except BaseException as exc:
            out.append((None, exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "the read waited on a FIFO"
    result, exc = out[0]
    if exc is not None:
        raise exc
    return result


def test_the_reader_is_bounded_per_call_and_resumes_mid_line(tmp_path):
    """What one call may read, and the skip that continues across calls from an
    offset inside a line."""
    big = _sparse(tmp_path / "zeros.jsonl", 300 << 20)
    stats = t.ReadStats()
    objs, off = t.read_from(str(big), 0, stats)
    assert objs == [] and 0 < off <= t.MAX_READ + t.MAX_LINE + t.CHUNK
    assert stats.too_long == 1
    objs, off2 = t.read_from(str(big), off, stats)  # mid-line: keeps skipping
    assert objs == [] and off < off2 <= off + t.MAX_READ + t.CHUNK and stats.too_long == 1
    assert t.line_start(str(big), -1) == big.stat().st_size  # no newline in reach
    with open(big, "ab") as f:
        f.write(b'\n{"type": "a"}\n{"type": "b"')
    size = big.stat().st_size
    assert t.line_start(str(big), -1) == size - len(b'{"type": "b"')
    objs, end = t.read_from(str(big), size - 30)  # mid-line again: to the next line
    assert objs == [{"type": "a"}] and end == size - len(b'{"type": "b"')
    assert t.read_from(str(tmp_path / "missing"), 7) == ([], 7)
    assert t.line_start(str(tmp_path / "missing"), 10) is None


def test_no_reading_function_waits_on_or_reads_what_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    for path in (str(fifo), "/dev/zero", str(tmp_path)):
        for read in (
            lambda p: t.read_from(p),
            lambda p: list(t.iter_file(p)),
            lambda p: list(t.iter_lines(p)),
            lambda p: t.line_start(p, -1),
            t.check,
        ):
            with pytest.raises(t.NotRegularFile):
                _returns(lambda: read(path))  # noqa: B023 (called before the loop goes on)
        assert _returns(lambda: t.read_at(path, 0, 10)) is None  # noqa: B023
        assert _returns(lambda: t.first_line(path)) == b""  # noqa: B023
    assert t.check(str(tmp_path / "missing")) is True  # may yet be written
    with pytest.raises(FileNotFoundError):
        list(t.iter_lines(str(tmp_path / "missing")))


def test_a_live_read_stops_at_its_time_bound_and_the_next_call_goes_on(tmp_path, monkeypatch):
    """Past MAX_SECONDS a read stops after the chunk in hand, at its last complete
    line; the next call reads on from there, so every line is read exactly once."""
    path = tmp_path / "t.jsonl"
    lines = [json.dumps({"n": i, "pad": "x" * 200}) for i in range(12_000)]  # ~2.6 MB
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(t, "MAX_SECONDS", -1.0)  # the bound already passed
    seen, offset, calls = [], 0, 0
    while offset < path.stat().st_size:
        objs, offset = t.read_from(str(path), offset)
        seen.extend(o["n"] for o in objs)
        calls += 1
        assert calls < 100
    assert seen == list(range(12_000))
    assert calls >= 3  # one CHUNK (1 MiB) a call: the time bound, not MAX_READ, stopped it


def test_a_whole_file_read_stops_at_its_size_bound_and_says_so(tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"n": i}) + "\n" for i in range(1000)))
    monkeypatch.setattr(t, "MAX_FILE", 100)
    stats = t.ReadStats()
    got = [o["n"] for o in t.iter_file(str(path), stats)]
    assert got == list(range(len(got))) and 0 < len(got) < 1000 and stats.truncated
    whole = t.ReadStats()
    monkeypatch.setattr(t, "MAX_FILE", 1 << 30)
    assert len(list(t.iter_file(str(path), whole))) == 1000 and not whole.truncated


def test_next_line_and_first_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"abc\ndef\n\nxyz")  # 12 bytes; past the end: the offset itself
    assert [t.next_line(str(path), p) for p in range(0, 14)] == [
        0, 4, 4, 4, 4, 8, 8, 8, 8, 9, 12, 12, 12, 13,
    ]  # fmt: skip
    assert t.first_line(str(path)) == b"abc" and t.first_line(str(path), 2) == b"ab"


def test_codex_and_gemini_read_their_files_through_the_kit(tmp_path):
    """A rollout or chat file that is a FIFO is refused, never waited on: the Codex
    builder still builds the payload's records, the Gemini builder holds no
    PreCompress on it, the replays' first-line reads answer nothing."""
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    assert _returns(lambda: rollout.session_meta(fifo)) == {}
    assert _returns(lambda: rollout.find_outcome(fifo, "call_1")) is None
    with pytest.raises(t.NotRegularFile):
        rollout.scan(fifo, 0)
    assert _returns(lambda: chats.compressed_after(fifo, 0)) is None
    assert _returns(lambda: chats._header(fifo)) == {}

    post = {
        "session_id": "s1",
        "hook_event_name": "PostToolUse",
        "transcript_path": fifo,
        "tool_name": "Bash",
        "tool_input": {"command": "true"},
        "tool_response": "ok",
        "tool_use_id": "call_1",
    }
    codex = CodexBuilder()
    drafts = _returns(lambda: codex.build("PostToolUse", post, 1))
    assert [d.section for d in drafts] == ["tool_result"] or codex.parked

    gemini = GeminiBuilder()
    pre = {"session_id": "s1", "transcript_path": fifo, "trigger": "manual"}
    out = _returns(lambda: gemini.build("PreCompress", pre, 1, transcript_size=0))
    assert not gemini.held and [d.section for d in out] == ["compaction", "compaction"]
