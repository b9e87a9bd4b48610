"""A payload whose JSON holds NaN, Infinity or a number too large for a float (not JSON,
but Python's parser, which the hook's dispatcher and blocking path use, accepts them),
through the hook as wired and the detached dispatcher: the value is recorded as null
(what JSON writers, msgspec among them, make of it), so a chained rule's file verifies
and every consumer gets valid JSON."""

from __future__ import annotations

import json

from .helpers import counters_of, dispatcher_alive, records, wait_until


def _refuse(token: str) -> None:
    # A base64 key or signature may hold the letters "NaN"; only the JSON token is wrong.
    raise AssertionError(f"not JSON: {token}")


def test_nan_and_infinity_are_recorded_as_null_and_the_chain_verifies(install, tmp_path):
    out, blk = tmp_path / "out.jsonl", tmp_path / "blk.jsonl"
    install.sensor(
        "nf",
        f"""\
        rules:
          all:
            sections: [tool_call]
            delivery: at_least_once
            chain: true
            dispatch: {{file: {{path: '{out}'}}}}
          now:
            sections: [tool_call]
            mode: blocking
            chain: true
            dispatch: {{file: {{path: '{blk}'}}}}
        """,
    )
    sid = "nonfinite"
    base = {"session_id": sid, "cwd": str(install.project), "transcript_path": ""}
    call = {**base, "hook_event_name": "PreToolUse", "tool_name": "mcp__x", "tool_use_id": "t1"}
    raw = json.dumps(call)[:-1] + ', "tool_input": {"a": NaN, "b": [Infinity, -Infinity, 1e999]}}'
    r = install.hook(raw)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    install.hook({**base, "hook_event_name": "SessionEnd", "reason": "other"})
    assert wait_until(lambda: len(records(out)) >= 1, timeout=60)
    assert wait_until(lambda: not dispatcher_alive(install, sid), timeout=60)
    for path in (out, blk):
        for line in path.read_text().splitlines():
            json.loads(line, parse_constant=_refuse)  # valid JSON for any reader
        [rec] = records(path)
        assert rec["data"]["input"] == {"a": None, "b": [None, None, None]}
        r = install.ways("sensors", "verify", str(path))
        assert r.returncode == 0, r.stdout
    assert counters_of(install, "nf/all")["delivered"] == 1
