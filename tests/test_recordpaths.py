"""recordpaths.py: the paths lint checks `where` against agree with docs/records.md."""

from __future__ import annotations

import re
from pathlib import Path

from ways_sensors.config.recordpaths import DATA, USAGE, envelope, impossible
from ways_sensors.config.spec import SECTIONS

DOC = (Path(__file__).parent.parent / "docs" / "records.md").read_text()


def _row(section: str) -> str:
    m = re.search(rf"^\| `{section}` \|.*$", DOC, re.M)
    assert m, f"docs/records.md has no row for {section}"
    return m.group(0)


def test_every_section_and_its_data_fields_are_in_the_docs_table():
    assert set(DATA) == set(SECTIONS)
    for section, fields in DATA.items():
        row = _row(section)
        if section == "tool_result":  # the tool_call row names the fields both carry
            row += _row("tool_call")
        for field in fields:
            assert re.search(rf"`{field}\b", row), (section, field)
    for name in USAGE:
        assert f"`{name}`" in DOC


def test_envelope_is_the_record_struct_and_documented():
    for name in envelope():
        assert f"`{name}`" in DOC, name


def test_impossible_paths_name_the_nearest_real_one():
    assert impossible("data.tool_name", ["tool_call"]) is None
    assert impossible("data.extra.anything.at.all", ["tool_call"]) is None
    assert impossible("data.input.*", ["tool_call"]) is None
    assert impossible("data.input.some_mcp_field", ["tool_call"]) is None
    assert impossible("agent_type", ["user_prompt"]) is None
    assert impossible("data.whatever", ["way_event"]) is None
    why = impossible("data.input.comand", ["tool_call"])
    assert why and "did you mean `data.input.command`" in why
    why = impossible("data.prompt", ["tool_call", "tool_result"])
    assert why and "user_prompt records do" in why
    why = impossible("sesion_id", ["tool_call"])
    assert why and "did you mean `session_id`" in why
