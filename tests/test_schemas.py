"""The committed JSON Schemas are what the typed spec generates, and they validate."""

from __future__ import annotations

import json

import yaml

from ways_sensors.config import schemas
from ways_sensors.config.spec import SECTIONS

from .conftest import REPO


def test_committed_schemas_are_not_stale():
    for name, text in schemas.rendered().items():
        committed = (REPO / "schema" / name).read_text()
        assert committed == text, (
            f"schema/{name} is stale: run python -m ways_sensors.config.schemas"
        )


def test_sensor_schema_describes_the_spec():
    schema = json.loads((REPO / "schema" / "sensor.schema.json").read_text())
    rule = schema["$defs"]["Rule"]
    assert set(rule["required"]) == {"sections", "dispatch"}
    for field in (
        "enabled",
        "where",
        "match",
        "mode",
        "timeout",
        "delivery",
        "queue_cap",
        "chain",
        "redact",
    ):
        assert field in rule["properties"]
    assert rule["additionalProperties"] is False
    sections = rule["properties"]["sections"]["items"]["enum"]
    assert sorted(sections) == sorted(SECTIONS)


def test_shipped_sensors_are_valid_documented_and_disabled():
    from ways_sensors.config.specdecode import decode_sensor

    for path in sorted((REPO / "sensors").glob("*.yaml")):
        text = path.read_text()
        assert text.startswith("#"), f"{path.name} explains itself in comments"
        sensor = decode_sensor(yaml.safe_load(text))
        assert sensor.enabled is False, f"{path.name} must ship disabled"
    names = {p.stem for p in (REPO / "sensors").glob("*.yaml")}
    assert {"audit", "shell-commands", "risky-actions"} <= names
