"""The typed spec: every field, default and limit of SPEC section 2."""

from __future__ import annotations

import typing

import pytest

from ways_sensors.config.sections import SECTIONS
from ways_sensors.config.spec import DEFAULT_QUEUE_CAP, Section, SpecError, parse_duration
from ways_sensors.config.specdecode import decode_sensor

FILE = {"file": {"path": "/tmp/x.jsonl"}}


def sensor(**rule):
    rule.setdefault("sections", ["tool_call"])
    rule.setdefault("dispatch", FILE)
    return {"spec": 1, "kind": "ways", "rules": {"r": rule}}


def test_the_light_section_names_are_the_specs():
    """sections.py spells the names for what must not load the spec; the `Section`
    literal spells them for msgspec and the type checker: the same names, in order."""
    assert typing.get_args(Section) == SECTIONS


def test_defaults_are_the_spec_table():
    r = decode_sensor(sensor()).rules["r"]
    assert r.enabled is True
    assert r.match == "all"
    assert r.mode == "async"
    assert r.timeout_s == 5.0
    assert r.delivery == "best_effort"
    assert r.queue_cap == DEFAULT_QUEUE_CAP == 1000
    assert r.chain is False
    assert r.redact == "default"
    assert r.dispatch.kind == "file"
    assert r.dispatch.file.format == "json"


@pytest.mark.parametrize(
    "text, seconds",
    [("500ms", 0.5), ("5s", 5.0), ("2m", 120.0), ("1.5s", 1.5), (2, 2.0), (0.25, 0.25), ("3", 3.0)],
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds
    assert decode_sensor(sensor(timeout=text)).rules["r"].timeout_s == seconds


@pytest.mark.parametrize("bad", ["5 parsecs", "-1s", "0", 0, -3, "", True, 99999])
def test_bad_durations_are_refused(bad):
    with pytest.raises(SpecError):
        decode_sensor(sensor(timeout=bad))


@pytest.mark.parametrize(
    "field, value",
    [
        ("mode", "sometimes"),
        ("delivery", "exactly_once"),
        ("match", "most"),
        ("redact", "some"),
        ("queue_cap", 0),
        ("queue_cap", "many"),
        ("chain", "yes"),
        ("enabled", "on"),
        ("sections", []),
        ("sections", ["tool_calls"]),
        ("colour", "red"),
    ],
)
def test_bad_rule_fields_name_their_path(field, value):
    with pytest.raises(SpecError) as exc:
        decode_sensor(sensor(**{field: value}))
    assert exc.value.path[:2] == ["rules", "r"]


def test_exactly_one_target():
    with pytest.raises(SpecError, match="exactly one"):
        decode_sensor(sensor(dispatch={**FILE, "command": {"argv": ["true"]}}))
    with pytest.raises(SpecError, match="exactly one"):
        decode_sensor(sensor(dispatch={}))


def test_each_target_kind():
    http = decode_sensor(
        sensor(dispatch={"http": {"url": "http://127.0.0.1:9/x", "headers": {"A": "${TOKEN}"}}})
    )
    assert http.rules["r"].dispatch.http.headers == {"A": "${TOKEN}"}
    cmd = decode_sensor(
        sensor(dispatch={"command": {"argv": ["logger", "-t", "x"], "input": "args"}})
    )
    assert cmd.rules["r"].dispatch.command.input == "args"
    text = decode_sensor(sensor(dispatch={"file": {"path": "~/log.txt", "format": "text"}}))
    assert text.rules["r"].dispatch.file.format == "text"


def test_target_field_limits():
    with pytest.raises(SpecError):
        decode_sensor(sensor(dispatch={"file": {"path": "relative/log"}}))
    with pytest.raises(SpecError):
        decode_sensor(sensor(dispatch={"http": {"url": "ftp://x"}}))
    with pytest.raises(SpecError):
        decode_sensor(sensor(dispatch={"command": {"argv": []}}))
    with pytest.raises(SpecError):
        decode_sensor(sensor(dispatch={"command": {"argv": ["x"], "input": "pipe"}}))


def test_otlp_takes_an_http_endpoint():
    s = decode_sensor(sensor(dispatch={"otlp": {"endpoint": "http://127.0.0.1:4318"}}))
    assert s.rules["r"].dispatch.kind == "otlp"
    with pytest.raises(SpecError):
        decode_sensor(sensor(dispatch={"otlp": {"endpoint": "grpc://127.0.0.1:4317"}}))
    with pytest.raises(SpecError):
        decode_sensor(sensor(dispatch={"otlp": {"endpoint": "http://x", "compression": "zstd"}}))


def test_other_kinds_belong_to_other_hosts():
    with pytest.raises(SpecError, match="another host"):
        decode_sensor({"kind": "attend", "rules": {}})


def test_top_level_fields():
    s = decode_sensor(
        {"spec": 1, "kind": "ways", "description": "d", "enabled": False, "rules": {}}
    )
    assert (s.description, s.enabled) == ("d", False)
    with pytest.raises(SpecError):
        decode_sensor({"spec": 2, "rules": {}})
    with pytest.raises(SpecError):
        decode_sensor({"rules": {"Bad Name": sensor()["rules"]["r"]}})
    with pytest.raises(SpecError):
        decode_sensor({"rules": {}, "extra": 1})
