"""Every list of targets or sections docs/sensors.md gives is the registry's, whole
(#36: the README named three targets of five and ten sections of 13; its reference part
is docs/sensors.md now)."""

from __future__ import annotations

import re
from pathlib import Path

from ways_sensors.config.spec import SECTIONS
from ways_sensors.targets import TARGETS

ROOT = Path(__file__).resolve().parent.parent


def names(text: str) -> list[str]:
    return re.findall(r"`([a-z_]+)`", text)


def test_the_sensor_pages_sections_row_names_every_section():
    text = (ROOT / "docs" / "sensors.md").read_text()
    row = re.search(
        r"^\| `sections` \| list of section names \| required \| [^|]*?: (.*?) \(", text, re.M
    )
    assert row and names(row.group(1)) == list(SECTIONS)


def test_the_sensor_pages_dispatch_row_names_every_target():
    text = (ROOT / "docs" / "sensors.md").read_text()
    row = re.search(r"^\| `dispatch` \| exactly one of (.*?) \|", text, re.M)
    assert row and names(row.group(1)) == list(TARGETS)
