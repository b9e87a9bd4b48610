"""docs/sensors.md, the README's reference for sensor files, names every field, target,
target field, section and operator the typed spec has: driven by the spec and the
target registry, so a new target or field fails here until the page covers it."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from ways_sensors.config.conditions import OPERATORS
from ways_sensors.config.spec import SECTIONS, Batch, Fields, Rule, SensorFile
from ways_sensors.targets import TARGETS

DOC = (Path(__file__).parent.parent / "docs" / "sensors.md").read_text()


def _part(heading: str) -> str:
    """The text under `## heading` up to the next `## `."""
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", DOC, re.M | re.S)
    assert m, f"docs/sensors.md has no '## {heading}'"
    return m.group(1)


def _row_names(text: str) -> set[str]:
    """The names in the first cell of each table row: | `name` | or | `a`, `b` | ..."""
    cells = re.findall(r"^\| ((?:`[a-z_]+`(?:, )?)+) \|", text, re.M)
    return {name for cell in cells for name in re.findall(r"`([a-z_]+)`", cell)}


def _names(struct: type[msgspec.Struct]) -> set[str]:
    return {f.encode_name for f in msgspec.structs.fields(struct)}


def test_every_top_level_and_rule_field_has_a_row():
    assert _names(SensorFile) <= _row_names(_part("Top level"))
    assert _names(Rule) <= _row_names(_part("Rule fields"))


def test_every_section_is_named_among_the_rule_fields():
    rules = _part("Rule fields")
    for section in SECTIONS:
        assert f"`{section}`" in rules, section


def test_every_target_and_each_of_its_fields():
    targets = _part("Targets")
    blocks = re.split(r"^\*\*`([a-z_]+)`\*\*", targets, flags=re.M)
    by_kind = dict(zip(blocks[1::2], blocks[2::2], strict=True))
    assert set(TARGETS) <= set(by_kind), set(TARGETS) - set(by_kind)
    for kind, target in TARGETS.items():
        assert _names(target.Spec) <= _row_names(by_kind[kind]), kind


def test_batch_fields_and_operators():
    text = DOC
    for name in (*_names(Batch), *_names(Fields)):
        assert f"`{name}`" in text, name
    where = _part("`where`")
    for op in OPERATORS:
        assert f"{{{op}:" in where, op
