"""SVG snapshots of the sensors tab (pytest-textual-snapshot): the table, the form with
an error, and a preview. They live in `__snapshots__/` beside this file; docs/tui.svg
in the README is the table's.

Deterministic by construction: a fixed terminal size, an install at a fixed path
(serialised by a lock, so two runs on one machine take turns), a fixed redaction key,
fixed counters and events-log lines, and no clock on screen. A deliberate change to
what the tab shows (a new spec field, a changed shipped sensor) changes them: review
the report, then `pytest tests/tui/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import fcntl
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input

from ways_sensors.state import counters
from ways_sensors.tui.app import SensorsApp

from ..conftest import Install, kill_dispatchers
from .conftest import HAND_WRITTEN, point_at, transcript

ROOT = Path("/tmp/ways-tui-snapshots")
SIZE = (170, 40)
REMOTE = """\
rules:
  collector:
    sections: [tool_call, tool_result, user_prompt]
    dispatch: {http: {url: 'https://collector.example/v1/records'}}
    delivery: at_least_once
"""


@pytest.fixture
def fixed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Install]:
    with open(str(ROOT) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(ROOT, ignore_errors=True)
        install = Install(ROOT)
        point_at(install, monkeypatch)
        monkeypatch.delenv("NO_COLOR")  # the README shows it in colour
        state = install.state_root
        state.mkdir(parents=True, mode=0o700)
        key = state / "redaction.key"
        key.write_bytes(bytes(range(32)))  # fixed tokens in masked records
        key.chmod(0o600)
        try:
            yield install
        finally:
            kill_dispatchers(ROOT)
            shutil.rmtree(ROOT, ignore_errors=True)


def populate(install: Install) -> None:
    """Sensors in every state the table shows, with counts and a dead letter."""
    install.sensor("team", HAND_WRITTEN)
    install.sensor("remote", REMOTE)
    install.sensor("theirs", REMOTE, layer="project")
    counters.add("team.calls", {"dispatched": 42, "delivered": 41, "timeouts": 1})
    counters.add("team.prompts", {"dispatched": 7, "delivered": 7})
    counters.add("remote.collector", {"dispatched": 12, "delivered": 9, "retries": 4})
    counters.add("remote.collector", {"rejected": 2, "refusals": 3})
    dead = install.state_root / "deadletters"
    dead.mkdir(mode=0o700)
    (dead / "remote.collector.jsonl").write_text('{"r": 1}\n{"r": 2}\n')
    event = {"ts": "2026-11-29T10:00:03.120Z", "kind": "deliver.refused", "sensor": "remote"}
    event |= {"rule": "collector", "outcome": "permanent", "detail": "HTTP 400"}
    (install.state_root / "events.log").write_text(json.dumps(event) + "\n")


async def on_row(pilot, key: str) -> None:
    await pilot.pause()
    main = pilot.app.screen
    keys = [r.key for r in main.shown]
    assert key in keys, keys
    main.table.move_cursor(row=keys.index(key))
    await pilot.pause()


def test_the_table(fixed, snap_compare):
    populate(fixed)

    async def on_a_rule(pilot):
        await on_row(pilot, "r:remote/collector")

    assert snap_compare(SensorsApp(), terminal_size=SIZE, run_before=on_a_rule)


def test_the_form_with_an_error(fixed, snap_compare):
    populate(fixed)

    async def bad_timeout(pilot):
        await on_row(pilot, "r:team/calls")
        await pilot.press("enter")
        box = pilot.app.screen.query_one("#field-timeout", Input)
        box.focus()
        await pilot.press("end", "ctrl+u", *"soon")
        await pilot.pause()

    assert snap_compare(SensorsApp(), terminal_size=SIZE, run_before=bad_timeout)


def test_the_preview(fixed, snap_compare):
    populate(fixed)
    transcript(fixed)

    async def preview(pilot):
        await on_row(pilot, "r:team/calls")
        await pilot.press("p")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(SensorsApp(), terminal_size=SIZE, run_before=preview)


@pytest.mark.parametrize("size", [(80, 30), (160, 40)], ids=["80", "160"])
def test_the_table_at_80_and_160_columns(fixed, snap_compare, size):
    """MODE and DELIVERY are on screen at 160 columns; at 80, the detail pane has them."""
    populate(fixed)

    async def on_a_rule(pilot):
        await on_row(pilot, "r:remote/collector")

    assert snap_compare(SensorsApp(), terminal_size=size, run_before=on_a_rule)


@pytest.mark.parametrize("size", [(80, 30), (160, 40)], ids=["80", "160"])
def test_scrolled_right_with_the_filter_open(fixed, snap_compare, size):
    """The rule's name stays in its pinned column after scrolling right, and the
    columns keep their widths while the filter box is open."""
    populate(fixed)

    async def scrolled(pilot):
        await on_row(pilot, "r:team/calls")
        await pilot.press("slash", *"team")
        await pilot.pause()
        await pilot.press("enter")
        pilot.app.screen.table.scroll_to(x=10_000, animate=False)
        await pilot.pause()

    assert snap_compare(SensorsApp(), terminal_size=size, run_before=scrolled)
