"""One severity decision, carried by every target and format (issue 34): an `error`
record is an error over OTLP, syslog, OCSF, ECS and Splunk HEC alike, and so on down
the levels. Before, OTLP decided on its own (an `error` record left as INFO)."""

from __future__ import annotations

import json

import pytest

from ways_sensors import formats
from ways_sensors.formats.severity import OCSF, OTEL, SYSLOG, level
from ways_sensors.pipeline.stages import dumps
from ways_sensors.targets import otlp, syslog
from ways_sensors.targets.base import Item

from . import samples

RECORDS = samples.records()


def one_of(section: str, **data: object) -> dict:
    return next(
        r
        for r in RECORDS
        if r["section"] == section and all(r["data"].get(k) == v for k, v in data.items())
    )


CASES = [
    ("error", one_of("error")),
    ("warning", one_of("permission", decision="denied")),
    ("notice", one_of("tool_result", status="failure")),
    ("info", one_of("tool_result", status="success")),
]


@pytest.mark.parametrize(("want", "record"), CASES, ids=[c[0] for c in CASES])
def test_every_target_and_format_carries_the_same_level(want, record):
    assert level(record) == want
    line = dumps(record)
    # syslog: PRI is facility * 8 + severity
    spec = syslog.SyslogTarget(host="127.0.0.1")
    msg = syslog.message(spec, Item(record, line))
    pri = int(msg[1 : msg.index(b">")])
    assert pri % 8 == SYSLOG[want]
    # OTLP logs: SeverityNumber and its short name
    lr = otlp.log_record(record, 0)
    assert (lr["severityNumber"], lr["severityText"]) == OTEL[want]
    # OCSF severity_id; ECS event.severity and log.level; HEC's indexed field
    assert json.loads(formats.encode("ocsf", record, line))["severity_id"] == OCSF[want]
    ecs = json.loads(formats.encode("ecs", record, line))
    assert (ecs["event"]["severity"], ecs["log"]["level"]) == (SYSLOG[want], want)
    hec = json.loads(formats.encode("splunk_hec", record, line))
    assert hec["fields"]["severity"] == want


def test_the_levels_rank_the_same_everywhere():
    order = ["error", "warning", "notice", "info"]
    assert sorted(order, key=SYSLOG.__getitem__) == order  # lower is graver in syslog
    assert sorted(order, key=lambda k: -OCSF[k]) == order
    assert sorted(order, key=lambda k: -OTEL[k][0]) == order


def test_every_format_is_declared_with_its_media_type_and_framing():
    """The registry is what the http target reads for content-type and batch framing."""
    for name, fmt in formats.FORMATS.items():
        assert "/" in fmt.MEDIA_TYPE, name
        assert fmt.BATCH in ("array", "lines"), name
    assert formats.body([b"{}", b"{}"], formats.get("ndjson").BATCH) == b"{}\n{}\n"
    assert formats.body([b"{}", b"{}"], formats.get("json").BATCH) == b"[{},{}]"
