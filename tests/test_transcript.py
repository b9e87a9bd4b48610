"""Robust transcript reading: real transcripts, and the ways a line can be broken."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from ways_sensors.agents.claude_code.transcript import classify_user
from ways_sensors.agents.kit import sessionfile as transcript
from ways_sensors.agents.kit.sessionfile import ReadStats, decode_line, read_from

from .conftest import TRANSCRIPT


def test_recorded_transcript_parses_whole():
    """A real transcript (main file and its subagents/) reads as one object per line,
    every bookkeeping kind included, nothing counted as malformed."""
    files = [TRANSCRIPT, *sorted(TRANSCRIPT.with_suffix("").glob("subagents/*.jsonl"))]
    assert len(files) == 2  # the session and its one subagent
    for path in files:
        stats = ReadStats()
        objs = list(transcript.iter_file(str(path), stats))
        n = len(path.read_bytes().splitlines())
        assert stats.lines == n and stats.malformed == 0
        assert len(objs) == n
        assert all(isinstance(o, dict) and o.get("type") for o in objs)
    kinds = {o.get("type") for o in transcript.iter_file(str(TRANSCRIPT), ReadStats())}
    assert {"user", "assistant", "queue-operation", "attachment", "system"} <= kinds


def test_nul_padding_two_objects_malformed_and_half_written_tail(tmp_path):
    a = json.dumps({"type": "a", "n": 1}).encode()
    b = json.dumps({"type": "b", "n": 2}).encode()
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        a
        + b"\n"
        + b"\x00" * 40
        + b"\n"
        + a
        + b
        + b"\n"
        + b'{"broken": \n'
        + b
        + b"\n"
        + b'{"type": "half'
    )
    stats = ReadStats()
    objs, offset = read_from(str(path), 0, stats)
    assert [o["type"] for o in objs] == ["a", "a", "b", "b"]
    assert stats.malformed == 1
    assert offset == path.stat().st_size - len(b'{"type": "half')
    with open(path, "ab") as f:
        f.write(b'", "n": 3}\n')
    more, offset2 = read_from(str(path), offset)
    assert more == [{"type": "half", "n": 3}]
    assert offset2 == path.stat().st_size


def test_missing_file_reads_nothing(tmp_path):
    assert read_from(str(tmp_path / "none.jsonl"), 5) == ([], 5)


def test_user_line_classes():
    def user(content, **kw):
        return {"type": "user", "message": {"role": "user", "content": content}, **kw}

    assert classify_user(user("hello")) == "prompt"
    assert classify_user(user("<command-name>/compact</command-name>")) == "prompt"
    assert classify_user(user("x", isCompactSummary=True)) == "summary"
    assert classify_user(user([{"type": "tool_result", "tool_use_id": "t"}])) == "tool_result"
    assert classify_user(user("x", toolUseResult={})) == "tool_result"
    assert classify_user(user("x", isMeta=True)) == "meta"
    assert classify_user(user("<local-command-stdout>ok")) == "command_output"
    assert (
        classify_user(user([{"type": "text", "text": "[Request interrupted by user]"}]))
        == "interrupt"
    )


@given(st.binary(max_size=300))
def test_decode_line_never_raises(data):
    out = decode_line(data)
    assert all(isinstance(o, dict) for o in out)


@given(st.lists(st.dictionaries(st.text(max_size=5), st.integers(), max_size=3), max_size=4))
def test_concatenated_objects_are_all_recovered(objs):
    line = "".join(json.dumps(o) for o in objs).encode()
    assert decode_line(line) == objs
