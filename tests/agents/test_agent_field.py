"""`agent` on every record: in the record schema, on the async and the blocking path, and on
the records of `ways sensors emit`."""

from __future__ import annotations

import json

from ways_sensors.config.schemas import record_schema

from ..conftest import payload
from .fixtures import CODEX, load, records, run_hook


def test_the_record_schema_documents_agent_and_keeps_older_records_valid():
    schema = record_schema()
    record = schema["$defs"]["Record"]
    assert record["properties"]["agent"]["default"] == "claude-code"
    assert "codex" in record["properties"]["agent"]["description"]
    assert "agent" not in record["required"]


def test_the_blocking_path_names_the_agent(install, tmp_path):
    out = tmp_path / "b.jsonl"
    install.sensor(
        "blk",
        f"rules:\n  now:\n    sections: [tool_call]\n    mode: blocking\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    call = load(CODEX).payloads("PreToolUse")[0]
    run_hook(install, "codex", call)
    run_hook(install, "claude-code", payload("PreToolUse"))
    got = records(out)
    assert [(r["agent"], r["data"]["tool_kind"], r["seq"]) for r in got] == [
        ("codex", "shell", None),
        ("claude-code", "shell", None),
    ]
    assert got[0]["prompt_id"] == call["turn_id"]


def test_way_events_carry_the_default_agent(install, tmp_path):
    out = tmp_path / "w.jsonl"
    install.sensor(
        "w",
        f"rules:\n  w:\n    sections: [way_event]\n    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    r = install.ways(
        "sensors", "emit", "--section", "way_event", "--session", "sess-w", "--input", "-",
        input=json.dumps({"kind": "fired", "way": "example"}),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    from ..helpers import wait_until

    assert wait_until(lambda: records(out), timeout=30)
    assert records(out)[0]["agent"] == "claude-code"
