"""Field projection per rule (`fields:`): the stage's semantics, the `metadata` preset
through the real hook and dispatcher (checked byte for byte), and what lint and
`ways sensors list` say about content leaving the machine."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from ways_sensors.config import projection
from ways_sensors.config.spec import Fields, SpecError
from ways_sensors.config.specdecode import decode_rule

from .conftest import ALL_SECTIONS
from .helpers import lines, no_checkpoints, wait_until
from .servers import Server
from .sessions import KNOWN, SID, TOTAL, ScriptedSession

SECTIONS = "[" + ", ".join(ALL_SECTIONS) + "]"
RECORD = {
    "schema": "ways.sensor.record/1",
    "section": "tool_call",
    "seq": 4,
    "session_id": "s-1",
    "agent_id": None,
    "agent_type": "main",
    "timestamp": "2026-10-06T09:14:02.000Z",
    "project": "/home/me/app",
    "hook_event": "PreToolUse",
    "data": {
        "tool_name": "Edit",
        "tool_use_id": "toolu_1",
        "input": {
            "file_path": "/home/me/app/a.py",
            "edits": [{"old": "x", "new": "y"}, {"old": "p", "new": "q"}],
        },
        "extra": {"cwd": "/home/me/app", "permission_mode": "default"},
    },
    "sensor": "s",
    "rule": "r",
    "rule_seq": 9,
}
IDENTITY = {k: RECORD[k] for k in RECORD if k in projection.ALWAYS_KEPT}


def fields(**kw) -> Fields:
    return decode_rule(
        {"sections": ["tool_call"], "dispatch": {"file": {"path": "/x"}}, "fields": kw}
    ).fields


def test_include_keeps_reached_fields_their_parents_and_the_identity():
    out = projection.project(RECORD, fields(include=["data.tool_name", "data.input.file_path"]))
    assert out == {
        **IDENTITY,
        "data": {"tool_name": "Edit", "input": {"file_path": "/home/me/app/a.py"}},
    }
    assert list(out) == [k for k in RECORD if k in out]  # the record's key order


def test_globs_per_segment_and_list_indexes_as_in_where():
    out = projection.project(RECORD, fields(include=["data.input.edits.*.new", "agent_*"]))
    assert out["data"] == {"input": {"edits": [{"new": "y"}, {"new": "q"}]}}
    assert (out["agent_id"], out["agent_type"]) == (None, "main")
    one = projection.project(RECORD, fields(include=["data.input.edits.1"]))
    assert one["data"] == {"input": {"edits": [{"old": "p", "new": "q"}]}}


def test_exclude_drops_reached_fields_and_never_the_identity():
    out = projection.project(RECORD, fields(exclude=["data.input", "data.extra.c*", "project"]))
    assert "project" not in out and "input" not in out["data"]
    assert out["data"]["extra"] == {"permission_mode": "default"}
    everything = projection.project(RECORD, fields(exclude=["*"]))
    assert everything == {**IDENTITY, "data": {}}  # data stays a mapping
    both = projection.project(RECORD, fields(include=["data"], exclude=["data.input.edits"]))
    assert both["data"]["input"] == {"file_path": "/home/me/app/a.py"}
    assert RECORD["data"]["input"]["edits"]  # the input record is not changed


def test_a_path_that_reaches_nothing_keeps_nothing():
    out = projection.project(RECORD, fields(include=["data.tool_name.deeper", "nope"]))
    assert out == {**IDENTITY, "data": {}}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("meta", "preset `metadata` or a mapping"),
        ({}, "include, exclude or both"),
        ({"include": ["data..x"]}, "not a dotted path"),
        ({"exclude": ["rule_seq"]}, "always kept"),
        ({"include": ["x"] * 65}, "at most 64 items"),
        ({"keep": ["x"]}, "unknown field"),
    ],
)
def test_bad_fields_are_spec_errors(value, message):
    with pytest.raises(SpecError, match=message):
        decode_rule(
            {"sections": ["tool_call"], "dispatch": {"file": {"path": "/x"}}, "fields": value}
        )


def test_what_carries_content():
    tool = ["tool_call", "tool_result"]
    assert projection.carries_content(None, tool)
    assert not projection.carries_content("metadata", ALL_SECTIONS)
    assert not projection.carries_content(fields(include=["data.tool_name"]), tool)
    assert projection.carries_content(fields(include=["data.input.command"]), tool)
    assert projection.carries_content(fields(include=["data.*"]), tool)
    drop = fields(exclude=["data.input", "data.output", "data.error", "data.extra"])
    assert not projection.carries_content(drop, tool)
    assert projection.carries_content(drop, ["user_prompt"])  # data.prompt still goes
    assert not projection.carries_content(fields(exclude=["data.*"]), ALL_SECTIONS)
    assert not projection.carries_content(
        fields(exclude=["data.input.*", "data.extra"]), ["tool_call"]
    )


# --- the metadata preset through the real hook and dispatcher ---------------------------


def sensor_text(out, server: Server | None = None) -> str:
    otlp = (
        f"""
          meta-otlp:
            sections: {SECTIONS}
            delivery: at_least_once
            fields: metadata
            dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{server.port}', compression: gzip}}}}
        """
        if server
        else ""
    )
    return f"""\
        rules:
          meta:
            sections: {SECTIONS}
            delivery: at_least_once
            chain: true
            fields: metadata
            dispatch: {{file: {{path: '{out}/meta.jsonl'}}}}
          full:
            sections: {SECTIONS}
            delivery: at_least_once
            dispatch: {{file: {{path: '{out}/full.jsonl'}}}}
        {otlp}"""


def forms(text: str) -> list[bytes]:
    """The ways a string can appear in JSON bytes: as it is, and escaped."""
    return [text.encode(), json.dumps(text).encode()[1:-1], json.dumps(text[8:30]).encode()[1:-1]]


def test_metadata_sends_no_free_text_byte_for_byte_and_its_chain_verifies(install, tmp_path):
    out = tmp_path / "out"
    server = Server("otlp")
    try:
        install.sensor("ship", sensor_text(out, server))
        ScriptedSession(install, tmp_path / "transcripts").play()
        total = TOTAL
        meta_recs = lambda: no_checkpoints(lines(out / "meta.jsonl"))  # noqa: E731
        assert wait_until(lambda: len(meta_recs()) == total, timeout=60)
        assert wait_until(
            lambda: len(no_checkpoints(lines(out / "full.jsonl"))) == total, timeout=60
        )
        logs = lambda: sum(  # noqa: E731  (the target batches: several records a request)
            lr.event_name != "ways.sensor.checkpoint"
            for req in server.requests
            for rl in req.resource_logs
            for sl in rl.scope_logs
            for lr in sl.log_records
        )
        assert wait_until(lambda: logs() == total, timeout=60)
        meta = (out / "meta.jsonl").read_bytes()
        full = (out / "full.jsonl").read_bytes()
        import gzip

        sent = b"".join(gzip.decompress(r) for r in server.raw)
        for name, text in KNOWN.items():
            assert text.encode() in full, name  # the session did carry it
            for form in forms(text):
                assert form not in meta, name
                assert form not in sent, name
        assert server.errors == []

        # each free text is its keyed digest: correlatable, not readable
        key = (install.state_root / "redaction.key").read_bytes()[:32]

        def digest(value) -> dict:
            data = (
                value.encode()
                if isinstance(value, str)
                else json.dumps(
                    value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
                ).encode()
            )
            return {"hmac": hmac.new(key, data, hashlib.sha256).hexdigest()[:32], "size": len(data)}

        recs = meta_recs()
        prompts = [r["data"]["prompt"] for r in recs if r["section"] == "user_prompt"]
        assert prompts == [digest(KNOWN["prompt"]), digest(KNOWN["prompt2"])]
        [call, _] = [r for r in recs if r["section"] == "tool_call"]
        assert call["data"]["input"] == digest({"command": KNOWN["input"]})
        assert (call["data"]["tool_name"], call["data"]["tool_use_id"]) == ("Bash", "toolu_01Known")
        assert call["session_id"] == SID and call["prompt_id"]
        results = [r["data"] for r in recs if r["section"] == "tool_result"]
        assert [d["status"] for d in results] == ["success", "failure"]
        assert results[1]["error"] == digest(KNOWN["error"])

        r = install.ways("sensors", "verify", str(out / "meta.jsonl"), "--rule", "ship/meta")
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"intact: {total} records in 1 chain(s)" in r.stdout
    finally:
        server.close()


# --- lint and list -------------------------------------------------------------------------


def test_lint_and_list_say_whether_content_leaves(install, tmp_path):
    remote = "https://collector.example.com:4318"
    install.sensor(
        "ship",
        f"""\
        rules:
          raw:
            sections: [tool_call]
            dispatch: {{otlp: {{endpoint: '{remote}'}}}}
          meta:
            sections: [tool_call, user_prompt]
            fields: metadata
            dispatch: {{otlp: {{endpoint: '{remote}'}}}}
          names-only:
            sections: [tool_call]
            fields: {{include: [data.tool_name]}}
            dispatch: {{http: {{url: 'https://siem.example.org/in'}}}}
          local:
            sections: [tool_call]
            dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:4318'}}}}
          batched-blocking:
            sections: [tool_call]
            mode: blocking
            batch: {{max_records: 10}}
            dispatch: {{file: {{path: '{tmp_path}/x.jsonl'}}}}
        """,
    )
    r = install.ways("sensors", "lint", "--json")
    warnings = json.loads(r.stdout)["warnings"]
    by_rule: dict[str, list[str]] = {}
    for w in warnings:
        by_rule.setdefault(w["rule"], []).append(w["message"])
    [raw] = by_rule["raw"]
    assert "off this machine" in raw and "collector.example.com" in raw
    assert "meta" not in by_rule and "names-only" not in by_rule and "local" not in by_rule
    assert any("batch has no effect" in m for m in by_rule["batched-blocking"])

    listed = json.loads(install.ways("sensors", "list", "--json").stdout)
    [ship] = [s for s in listed["sensors"] if s["name"] == "ship"]
    rows = {r["name"]: r for r in ship["rules"]}
    assert (rows["raw"]["off_machine"], rows["raw"]["content_off_machine"]) == (True, True)
    assert (rows["meta"]["off_machine"], rows["meta"]["content_off_machine"]) == (True, False)
    assert (rows["meta"]["fields"], rows["names-only"]["fields"]) == ("metadata", "projected")
    assert rows["raw"]["fields"] == "all" and not rows["names-only"]["content_off_machine"]
    assert rows["raw"]["destination"] == f"otlp {remote}/v1/logs"
    human = install.ways("sensors", "list").stdout
    row = next(line for line in human.splitlines() if line.startswith("ship/meta "))
    assert "metadata" in row and "no content" in row


def test_bad_fields_and_batch_are_refused_by_lint_with_their_line(install, tmp_path):
    path = install.sensor(
        "bad",
        f"""\
        rules:
          r:
            sections: [tool_call]
            dispatch: {{file: {{path: '{tmp_path}/x'}}}}
            batch: {{max_records: 0}}
        """,
    )
    r = install.ways("sensors", "lint", "--json")
    assert r.returncode == 3
    [err] = json.loads(r.stdout)["errors"]
    assert err["file"] == str(path) and err["line"] == 5 and "must be at least 1" in err["message"]
    path.write_text(
        "rules:\n  r:\n    sections: [tool_call]\n"
        f"    dispatch: {{file: {{path: '{tmp_path}/x'}}}}\n"
        "    batch: {max_delay: 5m}\n"
    )
    [err] = json.loads(install.ways("sensors", "lint", "--json").stdout)["errors"]
    assert "max_delay must be 0 to 60s" in err["message"]
