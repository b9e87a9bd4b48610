"""Every list of targets or sections the README and docs/sensors.md give is the
registry's, whole (#36: they named three targets of five and ten sections of 13)."""

from __future__ import annotations

import re
from pathlib import Path

from ways_sensors.spec import SECTIONS
from ways_sensors.targets import TARGETS

ROOT = Path(__file__).resolve().parent.parent


def names(text: str) -> list[str]:
    return re.findall(r"`([a-z_]+)`", text)


def test_the_readmes_sections_and_targets_are_the_registries():
    text = " ".join((ROOT / "README.md").read_text().split())
    sections = re.search(r"Sections: (.*?)\.", text)
    assert sections and names(sections.group(1)) == list(SECTIONS)
    dispatch = re.search(r"`dispatch` \(required: (.*?)\)", text)
    assert dispatch and names(dispatch.group(1)) == list(TARGETS)


def test_the_sensor_pages_dispatch_row_names_every_target():
    text = (ROOT / "docs" / "sensors.md").read_text()
    row = re.search(r"^\| `dispatch` \| exactly one of (.*?) \|", text, re.M)
    assert row and names(row.group(1)) == list(TARGETS)
