"""The wire formats (formats/): every section's OCSF event validates against the OCSF
1.8.0 schema; every ECS document carries ECS's required fields with allowed values; a
HEC envelope is what HEC documents; nothing of the record is lost in any of them."""

from __future__ import annotations

import json

import pytest

from ways_sensors import formats
from ways_sensors.formats import ecs, ocsf, severity, splunk_hec
from ways_sensors.pipeline.chain import link

from . import samples

RECORDS = samples.records()
LINES = samples.lines(RECORDS)
PAIRS = list(zip(RECORDS, LINES, strict=True))
IDS = [f"{r['rule_seq']}-{r['section']}" for r in RECORDS]

# ECS 9 allowed values (elastic.co/docs/reference/ecs/ecs-allowed-values-event-*)
ECS_KIND = {"alert", "asset", "enrichment", "event", "metric", "state", "pipeline_error",
            "signal"}  # fmt: skip
ECS_CATEGORY = {"api", "authentication", "configuration", "database", "driver", "email",
                "file", "host", "iam", "intrusion_detection", "library", "malware",
                "network", "package", "process", "registry", "session", "threat",
                "vulnerability", "web"}  # fmt: skip
ECS_TYPE = {"access", "admin", "allowed", "change", "connection", "creation", "deletion",
            "denied", "device", "end", "error", "group", "indicator", "info",
            "installation", "protocol", "start", "user"}  # fmt: skip
ECS_OUTCOME = {"failure", "success", "unknown"}


def test_every_section_is_sampled():
    """The samples cover every section docs/records.md lists."""
    documented = {"user_prompt", "queued_message", "assistant_response", "tool_call",
                  "tool_result", "permission", "notification", "error", "subagent",
                  "compaction", "session_start", "session_end", "way_event"}  # fmt: skip
    assert {r["section"] for r in RECORDS} == documented


@pytest.mark.parametrize(("record", "line"), PAIRS, ids=IDS)
def test_ocsf_event_validates_against_the_schema(record, line):
    doc = json.loads(formats.encode("ocsf", record, line))
    assert samples.ocsf_errors(doc) == []
    assert doc["type_uid"] == doc["class_uid"] * 100 + doc["activity_id"]
    assert doc["metadata"]["version"] == ocsf.VERSION == "1.8.0"
    assert doc["metadata"]["product"]["name"] == "ways sensors"
    assert doc["metadata"]["correlation_uid"] == record["session_id"]
    assert doc["metadata"]["uid"] == f"{record['session_id']}:audit/all:{record['rule_seq']}"
    assert doc["actor"]["app_name"] == "claude-code"
    assert doc["actor"]["user"] == {
        "uid": "dana",
        "name": "Dana Dev",
        "email_addr": "dana@corp.example",
        "full_name": "Dana Dev",
        "groups": [{"name": "eng"}, {"name": "sre"}],
        "org": {"name": "platform", "ou_name": "platform"},
    }
    assert doc["device"]["uid"] == "4c4c4544004d3510"
    assert doc["device"]["hostname"] == "build-7"
    assert doc["unmapped"]["ways"]["install_id"] == samples.IDENTITY["install_id"]
    assert doc["severity_id"] == severity.OCSF[severity.level(record)]
    # nothing lost: raw_data is the record as json sends it, and its chain still holds
    raw = json.loads(doc["raw_data"])
    assert doc["raw_data"].encode() == line and raw == record
    chain = raw.pop("chain")
    assert link(chain["prev"], raw) == chain["hash"]
    assert doc["observables"] == [
        {"name": "ways.chain.hash", "type_id": 99, "type": "Other", "value": chain["hash"]}
    ]


def test_the_schema_check_bites():
    """The validator is not vacuous: an event missing a required attribute, or with a
    wrong activity for its class, fails."""
    record, line = PAIRS[2]
    good = ocsf.event(record, line)
    assert samples.ocsf_errors(good) == []
    for broken in (
        {k: v for k, v in good.items() if k != "process"},
        {**good, "activity_id": 42},
        {**good, "time": "yesterday"},
        {**good, "surprise": 1},
    ):
        assert samples.ocsf_errors(broken)


def test_ocsf_classes_follow_the_documented_table():
    got = [(r["section"], ocsf.event(r, li)["class_uid"], ocsf.event(r, li)["activity_id"])
           for r, li in PAIRS]  # fmt: skip
    assert got == [
        ("session_start", 3002, 1), ("user_prompt", 6003, 1), ("tool_call", 1007, 1),
        ("tool_result", 1007, 2), ("tool_result", 1007, 2), ("tool_call", 6003, 2),
        ("tool_call", 6003, 3), ("tool_call", 6003, 1), ("tool_call", 6003, 99),
        ("tool_result", 6003, 2), ("permission", 6003, 99), ("permission", 6003, 99),
        ("permission", 6003, 99), ("queued_message", 6003, 1),
        ("assistant_response", 6003, 2), ("subagent", 6002, 3), ("subagent", 6002, 4),
        ("notification", 0, 99), ("compaction", 0, 99), ("error", 6008, 1),
        ("way_event", 0, 99), ("session_end", 3002, 2), ("session_end", 3002, 2),
    ]  # fmt: skip
    shell = ocsf.event(*PAIRS[2])
    assert shell["process"]["cmd_line"] == "git status"
    failed, denied = ocsf.event(*PAIRS[4]), ocsf.event(*PAIRS[11])
    assert (failed["status_id"], denied["status_id"]) == (2, 2)
    assert failed["severity_id"] > shell["severity_id"] and denied["severity_id"] > 1
    assert ocsf.event(*PAIRS[19])["severity_id"] == 4  # an error section ranks highest
    sub = ocsf.event(*PAIRS[5])
    assert (sub["actor"]["app_uid"], sub["actor"]["invoked_by"]) == ("a1b2", "Explore")


@pytest.mark.parametrize(("record", "line"), PAIRS, ids=IDS)
def test_ecs_document_carries_the_required_fields(record, line):
    doc = json.loads(formats.encode("ecs", record, line))
    assert doc["@timestamp"] == record["timestamp"]
    assert doc["ecs"]["version"] == ecs.VERSION
    event = doc["event"]
    assert event["kind"] in ECS_KIND
    assert event["category"] and set(event["category"]) <= ECS_CATEGORY
    assert event["type"] and set(event["type"]) <= ECS_TYPE
    assert event["action"] == record["section"]
    assert event["outcome"] in ECS_OUTCOME
    assert doc["agent"]["type"] == "claude-code"
    assert doc["user"] == {
        "id": "dana",
        "name": "dana",
        "email": "dana@corp.example",
        "full_name": "Dana Dev",
        "roles": ["eng", "sre"],
        "group": {"name": "platform"},
    }
    assert doc["host"] == {"hostname": "build-7", "name": "build-7", "id": "4c4c4544004d3510"}
    assert doc["ways"] == record  # the rest, whole, under ways.*
    assert event["hash"] == record["chain"]["hash"]
    if record["data"].get("tool_kind") == "shell":
        assert doc["process"]["command_line"] == record["data"]["command"]
    else:
        assert "process" not in doc


def test_ecs_outcomes_and_categories():
    docs = [ecs.document(r) for r in RECORDS]
    assert docs[3]["event"]["outcome"] == "success"
    assert docs[4]["event"]["outcome"] == "failure"
    assert docs[11]["event"]["type"] == ["denied"]
    assert docs[12]["event"]["type"] == ["allowed"]
    assert docs[0]["event"]["category"] == ["session"]
    assert docs[5]["event"]["category"] == ["file"]


@pytest.mark.parametrize(("record", "line"), PAIRS, ids=IDS)
def test_hec_envelope(record, line):
    doc = json.loads(formats.encode("splunk_hec", record, line))
    assert set(doc) == {"time", "host", "source", "sourcetype", "fields", "event"}
    assert doc["event"] == record
    assert doc["time"] == pytest.approx(ocsf.epoch_ms(record["timestamp"]) / 1000)
    assert doc["source"] == "ways:audit/all" and doc["sourcetype"] == splunk_hec.SOURCETYPE
    assert all(isinstance(v, str) for v in doc["fields"].values())


def test_json_is_the_record_untouched_and_text_one_line():
    record, line = PAIRS[3]
    assert formats.encode("json", record, line) is line
    text = formats.encode("text", record, line).decode()
    assert "\n" not in text and "tool_result" in text and "clean" in text


def test_batch_bodies():
    docs = [b'{"a":1}', b'{"b":2}']
    assert json.loads(formats.body(docs, "array")) == [{"a": 1}, {"b": 2}]
    assert formats.body(docs, "lines") == b'{"a":1}\n{"b":2}\n'


def test_text_keeps_a_checkpoints_signed_note_on_one_line():
    note = "example.org/ways\n3\nq8Lq2r0cXg==\n\n— example.org/ways AbCdEf==\n"
    rec = {"schema": "ways.sensor.checkpoint/1", "section": "checkpoint", "last_rule_seq": 3,
           "checkpoint": note, "timestamp": "2026-10-06T09:14:00.000Z"}  # fmt: skip
    text = formats.encode("text", rec, b"").decode()
    assert "\n" not in text and "checkpoint up to #3" in text
    assert text.split("#3 ", 1)[1].replace("\\n", "\n") == note  # the proof, whole
