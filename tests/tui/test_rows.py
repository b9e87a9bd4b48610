"""The table as data (tui/rows.py) and the short forms it shows (services/catalog.py)."""

from __future__ import annotations

import json

from ways_sensors.services import catalog
from ways_sensors.services.fire import FireResult
from ways_sensors.tui import rows


def test_conditions_in_short_form():
    assert catalog.condition(None) == ""
    where = {
        "data.tool_name": "Bash",
        "data.input.command": {"matches": "rm -rf"},
        "agent_type": {"in": ["main", "Explore"]},
        "data.duration_ms": {"above": 500},
        "data.input.file_path": {"not": "*/tmp/*"},
    }
    assert catalog.condition(where) == (
        'tool_name=Bash and input.command ~ rm -rf and agent_type in ["main", "Explore"]'
        " and duration_ms > 500 and input.file_path!=*/tmp/*"
    )
    assert catalog.condition({"a": 1, "b": {"like": "x*"}}, "any") == "a=1 or b like x*"


def test_rows_narrow_on_every_word_of_the_filter(tab):
    tab.sensor(
        "team",
        "rules:\n  calls:\n    sections: [tool_call]\n"
        "    dispatch: {http: {url: 'https://collector.example/x'}}\n"
        "  local:\n    sections: [tool_call]\n    dispatch: {file: {path: ~/x.jsonl}}\n"
        "  meta:\n    sections: [tool_call]\n    fields: metadata\n"
        "    dispatch: {http: {url: 'https://metrics.example/m'}}\n",
    )
    built = rows.build(catalog.listing())
    assert [r.key for r in rows.narrow(built, "team collector")] == ["r:team/calls"]
    assert [r.key for r in rows.narrow(built, "TEAM")] == [
        "s:team",
        "r:team/calls",
        "r:team/local",
        "r:team/meta",
    ]
    assert rows.narrow(built, "") == built
    calls = next(r for r in built if r.key == "r:team/calls")
    assert calls.cells["off"] == "content" and "may leave this machine" in calls.detail
    assert next(r for r in built if r.key == "r:team/local").cells["target"] == "file ~/x.jsonl"
    meta = next(r for r in built if r.key == "r:team/meta")
    assert (meta.cells["off"], meta.cells["fields"]) == ("no content", "metadata")
    assert calls.cells["fields"] == "all"


def test_events_log_lines_and_fire_outcomes_for_people():
    line = json.dumps(
        {"ts": "2026-11-29T10:00:03.120Z", "kind": "deliver.timeout", "sensor": "s", "rule": "r"}
    )
    assert rows.event_line(line) == "10:00:03 deliver.timeout sensor=s rule=r"
    assert rows.event_line("not json") == "not json"
    base = dict(retry_after=None, killed=False, duration_ms=12.4, timeout_s=5.0, at=0.0)
    ok = FireResult("s/r", "accepted", None, "", **base)
    no = FireResult("s/r", "permanent", "refused", "HTTP 400", **base)
    slow = FireResult("s/r", "retryable", "timeout", "", **base)
    assert rows.outcome_text(ok).startswith("s/r: delivered in 12 ms (timeout 5s) at ")
    assert "refused (HTTP 400, permanent) in 12 ms" in rows.outcome_text(no)
    assert "timed out in 12 ms" in rows.outcome_text(slow)


def test_control_characters_in_a_sensor_file_are_shown_as_text(tab):
    """Issue 22, defect 11: the tab's cells and detail never carry a raw control
    character from a sensor file (an OSC 2 pane title, an OSC 52 clipboard write)."""
    tab.sensor(
        "evil",
        'description: "\\e]2;pwned\\a\\e]52;c;eA==\\a"\n'
        "rules:\n  r:\n    sections: [tool_call]\n"
        '    dispatch: {command: {argv: ["logger", "\\e[2J"]}}\n',
    )
    built = rows.build(catalog.listing())
    shown = [v for r in built for v in [*r.cells.values(), r.detail]]
    assert not any(c in v for v in shown for c in ("\x1b", "\x07", "\x9b"))
    sensor = next(r for r in built if r.key == "s:evil")
    assert "\\u001b]2;pwned\\u0007" in sensor.detail
