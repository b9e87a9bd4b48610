"""No new field or section breaks an existing consumer: the record schema only grows.

tests/fixtures/records-v1/ keeps what the version before the session issue produced:
its `schema/record.schema.json` and records it made (its `ways sensors test` replay of
a real-client transcript and its `ways sensors fire --dry-run`; paths rewritten, so
their chain hashes no longer verify). Old records must still decode as today's
records; the schema may add sections and optional fields, never require or remove
one; and each section's data keeps every field an old record of it had.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from ways_sensors import records
from ways_sensors.agents.claude_code import adapter
from ways_sensors.agents.claude_code.tracker import Tracker
from ways_sensors.config.schemas import Record, record_schema

OLD = Path(__file__).parent / "fixtures" / "records-v1"
NEW_FIXTURES = Path(__file__).parent / "fixtures" / "claude-code-2.1.332"
OLD_RECORDS = [json.loads(x) for x in (OLD / "records.jsonl").read_text().splitlines()]
OLD_SCHEMA = json.loads((OLD / "record.schema.json").read_text())


def test_the_fixtures_cover_every_old_section():
    assert {r["section"] for r in OLD_RECORDS} == set(
        OLD_SCHEMA["$defs"]["Record"]["properties"]["section"]["enum"]
    )


@pytest.mark.parametrize("rec", OLD_RECORDS, ids=lambda r: r["section"])
def test_old_records_still_decode_as_records(rec):
    msgspec.convert(rec, Record, strict=True)


def test_the_schema_only_grows():
    old, new = OLD_SCHEMA["$defs"]["Record"], record_schema()["$defs"]["Record"]
    assert set(new["required"]) <= set(old["required"])  # nothing newly required
    for name, prop in old["properties"].items():
        assert name in new["properties"], name  # nothing removed
        if "enum" in prop:
            assert set(prop["enum"]) <= set(new["properties"][name]["enum"])
        else:
            assert new["properties"][name] == prop, name
    assert set(old["properties"]["section"]["enum"]) < set(new["properties"]["section"]["enum"])
    for name, definition in OLD_SCHEMA["$defs"].items():
        if name != "Record":
            assert record_schema()["$defs"][name] == definition, name


def _new_data(section: str, phase: str | None, agent: bool) -> dict:
    """Today's data for a record like an old one, from a payload of the same event."""
    ts = 1_795_000_000_000_000_000
    if section == "way_event":  # what the emitter sent, as it sent it
        return records.way_event(adapter.example("way_event"), ts)[0].data
    if section == "queued_message":  # read from the transcript: absorbed while working
        t, draft = Tracker(), lambda *a, **kw: records.Draft(a[0], "", "", a[1])
        ops = [("enqueue", "also this"), ("remove", "also this")]
        lines = [{"type": "queue-operation", "operation": op, "content": x} for op, x in ops]
        return next(d for line in lines for d in t._line(line, None, draft)).data
    if (section, phase) == ("subagent", "stop") or (section == "assistant_response" and agent):
        payload = json.loads((NEW_FIXTURES / "SubagentStop.json").read_text())
    elif section == "compaction" and phase == "after":
        payload = {**adapter.example("session_start"), "source": "compact"}
    else:
        payload = adapter.example(section)
    drafts = adapter.offline_drafts(payload, ts)
    [d] = [d for d in drafts if d.section == section and d.data.get("phase") == phase]
    return d.data


@pytest.mark.parametrize("rec", OLD_RECORDS, ids=lambda r: r["section"])
def test_every_old_data_field_is_still_there(rec):
    data = _new_data(rec["section"], rec["data"].get("phase"), rec["agent_type"] != "main")
    assert set(rec["data"]) - {"extra"} <= set(data), rec["section"]
