"""Records nested about 900 levels deep, through the hook as wired and the detached
dispatcher, `ways sensors emit` and `ways sensors fire`: delivered whole (the part
below depth.DEPTH_MAX as its JSON text), never counted lost, nothing crashes; input
deeper than JSON parsing allows is a one-line error."""

from __future__ import annotations

import json
import sys

from ways_sensors.depth import DEPTH_MAX

from .helpers import counters_of, dispatcher_alive, records, wait_until

DEPTH = 900


def deep(leaf: str = "bottom") -> str:
    """JSON text DEPTH levels deep (written by hand: json.dumps itself would recurse)."""
    text = json.dumps(leaf)
    for i in range(DEPTH):
        text = "[%s, %d]" % (text, i) if i % 2 else '{"k": %s}' % text
    return text


def unfold(value: object) -> object:
    """Follow "k" (and a list's first item) down to where the text stands in."""
    while isinstance(value, (dict, list)):
        value = value["k"] if isinstance(value, dict) else value[0]
    return value


def sensor(install, out) -> None:
    install.sensor(
        "deep",
        f"""\
        rules:
          all:
            sections: [tool_call, way_event]
            delivery: at_least_once
            chain: true
            dispatch: {{file: {{path: '{out}'}}}}
        """,
    )


def test_deep_records_are_delivered_never_lost(install, tmp_path):
    out = tmp_path / "out.jsonl"
    sensor(install, out)
    sid = "deep-session"
    base = {"session_id": sid, "cwd": str(install.project), "transcript_path": ""}
    call = {
        **base,
        "hook_event_name": "PreToolUse",
        "tool_name": "mcp__deep",
        "tool_use_id": "toolu_deep",
    }
    secret = "ghp_" + "A1b2C3d4E5" * 4
    r = install.hook(json.dumps(call)[:-1] + ', "tool_input": ' + deep(secret) + "}")
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    src = tmp_path / "event.json"
    src.write_text('{"kind": "fired", "detail": %s}' % deep())
    emit = ("sensors", "emit", "--section", "way_event", "--session", sid, "--input", str(src))
    r = install.ways(*emit)
    assert r.returncode == 0, r.stderr
    install.hook({**base, "hook_event_name": "SessionEnd", "reason": "other"})
    assert wait_until(lambda: len(records(out)) >= 2, timeout=60)
    assert wait_until(lambda: not dispatcher_alive(install, sid), timeout=60)

    got = {rec["section"]: rec for rec in records(out)}
    assert set(got) == {"tool_call", "way_event"}
    counts = counters_of(install, "deep/all")
    assert counts["lost"] == 0 and counts["rejected"] == 0 and counts["delivered"] == 2
    text = unfold(got["tool_call"]["data"]["input"])
    assert isinstance(text, str) and text.startswith("{")
    sys.setrecursionlimit(10_000)  # only to compare the bottom of it here
    bottom = unfold(json.loads(text))
    assert bottom != secret and secret not in text  # masked inside the text as anywhere
    assert unfold(json.loads(unfold(got["way_event"]["data"]["detail"]))) == "bottom"
    assert "dispatch.unsendable_record" not in (install.state_root / "events.log").read_text()
    r = install.ways("sensors", "verify", str(out))
    assert r.returncode == 0, r.stdout


def test_fire_and_emit_take_deep_input_and_refuse_deeper_in_one_line(install, tmp_path):
    out = tmp_path / "out.jsonl"
    sensor(install, out)
    src = tmp_path / "deep.json"
    src.write_text('{"kind": "fired", "detail": %s}' % deep())
    r = install.ways("sensors", "fire", "deep/all", "--section", "way_event", "--input", str(src))
    assert r.returncode == 0, r.stdout + r.stderr
    [rec] = records(out)
    assert rec["test"] is True and isinstance(unfold(rec["data"]["detail"]), str)
    depth = 0
    node = rec["data"]["detail"]
    while isinstance(node, (dict, list)):
        node, depth = (node["k"] if isinstance(node, dict) else node[0]), depth + 1
    assert depth < DEPTH_MAX  # containers below data.detail, before the text

    deeper = tmp_path / "deeper.json"
    deeper.write_text('{"kind": "fired", "detail": ' + "[" * 5000 + "]" * 5000 + "}")
    for args in (
        ("sensors", "emit", "--section", "way_event", "--session", "s1", "--input", str(deeper)),
        ("sensors", "fire", "deep/all", "--section", "way_event", "--input", str(deeper)),
    ):
        r = install.ways(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert "nested" in r.stderr and len(r.stderr.strip().splitlines()) <= 2, r.stderr
        assert "unexpected" not in r.stderr
    assert not (install.state_root / "errors.log").exists()
