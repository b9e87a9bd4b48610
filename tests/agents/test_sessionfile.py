"""The agent kit's session-file reader (agents/kit/sessionfile.py): bounded per call in
bytes and time, regular files only, for every agent that reads one."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ways_sensors.agents.codex import rollout
from ways_sensors.agents.codex.builder import Builder as CodexBuilder
from ways_sensors.agents.gemini import chats
from ways_sensors.agents.gemini.builder import Builder as GeminiBuilder
from ways_sensors.agents.kit import handed
from ways_sensors.agents.kit import sessionfile as t

from ..jsonvalues import same_outcome, values


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


@settings(max_examples=400, deadline=None)
@given(values, st.sampled_from(["", " ", "x", " {}", "]", ' {"b": 1}']), st.sampled_from(["", " "]))
def test_a_line_is_read_by_msgspec_as_json_reads_it(value, tail, head):
    """With msgspec loaded (as in a dispatcher) a line is decoded by it, and what it
    gives or refuses is json's: NaN, a lone surrogate or 1e400 are read by json."""
    assert "msgspec" in sys.modules
    doc = head + json.dumps(value) + tail
    same_outcome(lambda: t._loads(doc), lambda: json.loads(doc))
    assert t._fast and isinstance(t._fast[0], msgspec.json.Decoder)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]":,0123456789.eE-+ \ntruefalsn\\u\ufeffINa\x01\t', max_size=40))
def test_arbitrary_text_fails_or_reads_as_json_does(text):
    same_outcome(lambda: t._loads(text), lambda: json.loads(text))


def test_lines_json_alone_reads_are_the_same_objects(tmp_path):
    """NaN, a lone surrogate and 1e400 (msgspec refuses them) and a line of two
    objects still come out as json reads them."""
    f = tmp_path / "s.jsonl"
    f.write_bytes(
        b'{"a": NaN, "b": "\\ud800", "c": 1e400}\n{"x": 1} {"y": 2}\n{"z": [1, 2.5, null]}\n'
    )
    got = [objs for _, objs in t.iter_lines(str(f))]
    assert repr(got) == repr(
        [[{"a": float("nan"), "b": "\ud800", "c": float("inf")}], [{"x": 1}, {"y": 2}],
         [{"z": [1, 2.5, None]}]]
    )  # fmt: skip


def _replayed(monkeypatch, hand: bool) -> tuple[list, int]:
    """The fixture transcript's drafts, and how many lines were decoded on the way."""
    from ways_sensors.agents.claude_code.replay import Replay

    from ..conftest import TRANSCRIPT

    decoded = []
    real = t.decode_line
    monkeypatch.setattr(
        t, "decode_line", lambda line, stats=None: decoded.append(1) or real(line, stats)
    )
    if not hand:
        monkeypatch.setattr(handed, "hand_line", lambda *args: None)
        monkeypatch.setattr(handed, "hand_file", lambda *args: None)
    drafts = [
        (d.section, json.dumps(d.data, sort_keys=True, default=repr))
        for d in Replay(str(TRANSCRIPT)).drafts()
    ]
    monkeypatch.undo()
    return drafts, len(decoded)


def test_a_replay_hands_its_decoded_lines_to_the_builder_and_makes_the_same_drafts(
    monkeypatch,
):
    """The builder reads the replay's scratch copy of the transcript; the lines the
    replay decoded go to it decoded, so each is decoded once, and nothing it builds
    changes."""
    shared, fewer = _replayed(monkeypatch, hand=True)
    alone, more = _replayed(monkeypatch, hand=False)
    assert shared == alone and len(shared) > 10
    assert fewer < more
    assert (handed._lines, handed._bytes, handed._file) == ({}, {}, {})  # its end forgets


def test_handed_lines_are_read_once_within_a_limit_then_from_the_file(tmp_path):
    f = tmp_path / "copy.jsonl"
    lines = [b'{"n": 1}\n', b'{"n": 2}\n', b'{"n": 3}\n']
    f.write_bytes(b"".join(lines))
    objs = [[{"n": "handed 1"}], [{"n": "handed 2"}], [{"n": "handed 3"}]]
    ends = [9, 18, 27]
    try:
        for start, end, o in zip([0, 9, 18], ends, objs, strict=True):
            handed.hand_line(str(f), start, end, o)
        stats = t.ReadStats()
        first = t.read_lines(str(f), 0, stats, limit=18)  # the third was written after
        assert first == [(9, objs[0]), (18, objs[1])]
        assert (stats.lines, stats.objects) == (2, 2)
        from_file = [(9, [{"n": 1}]), (18, [{"n": 2}]), (27, [{"n": 3}])]
        assert t.read_lines(str(f), 0) == from_file  # taken once: the file itself now
        assert t.read_lines(str(f), 18) == [(27, objs[2])]  # still handed until read
        assert t.read_lines(str(f), 18) == from_file[2:]
    finally:
        handed.forget(str(f))
    big = tmp_path / "big.jsonl"
    handed.hand_line(str(big), 0, handed.HANDED_MAX + 1, [{"too": "much"}])  # not held
    assert str(big) not in handed._lines


def test_a_handed_whole_file_is_taken_once_and_only_while_unchanged(tmp_path):
    f = tmp_path / "agent-a.jsonl"
    f.write_bytes(b'{"n": 1}\n')
    mine = [{"n": "handed"}]
    handed.hand_file(str(f), handed.identity(str(f)), mine, 1)
    stats = t.ReadStats()
    assert list(t.iter_file(str(f), stats)) == mine and (stats.lines, stats.objects) == (1, 1)
    assert list(t.iter_file(str(f))) == [{"n": 1}]  # once
    handed.hand_file(str(f), handed.identity(str(f)), mine, 1)
    with open(f, "ab") as out:  # written since the replay read it
        out.write(b'{"n": 2}\n')
    assert list(t.iter_file(str(f))) == [{"n": 1}, {"n": 2}]


lines = st.builds(
    lambda head, value, tail, cut: (head + json.dumps(value) + tail).encode("utf-8", "replace")[
        : cut or None
    ],
    st.sampled_from(["", " ", "\x0c", "\ufeff", "\x00"]),
    values,
    st.sampled_from(["", "\n", " \t\n", ' {"b": 2}\n', "\x00\n", "\x0b\n", "]\n"]),
    st.integers(min_value=0, max_value=3),
) | st.binary(max_size=40)


@settings(max_examples=400, deadline=None)
@given(lines)
def test_a_line_decodes_to_what_json_alone_decodes(line):
    """decode_line reads a line's bytes with msgspec first; a line it takes or leaves
    comes out as the json-only path reads it (NUL, invalid UTF-8, a BOM, a form feed,
    two objects, a cut line)."""
    got = t.decode_line(line)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(t, "_fast", [])
        mp.setattr(t, "sys", type("NoMsgspec", (), {"modules": {}}))
        want = t.decode_line(line)
    assert repr(got) == repr(want)
