"""An idle sensors tab reads nothing again (issue 22, defect 21: 2.1 s of CPU per 10 s
idle with 2,000 rules): its once-a-second tick stats the state files and, when none
changed, takes no status snapshot, touches no table cell and leaves the footer as it
is; a counter written by a session is read and shown at the next tick. Observed through
the real app, headless: the screen's snapshot, the table's own update count and the
cells, never a clock.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .conftest import cell, drive, main_screen

SENSOR = "rules:\n  all:\n    sections: [tool_call]\n    dispatch: {file: {path: '~/out.jsonl'}}\n"


def age_everything(root: Path, seconds: float) -> None:
    """Every file under the state root as last written `seconds` ago."""
    then = time.time() - seconds
    for p in root.rglob("*"):
        os.utime(p, (then, then), follow_symlinks=False)


def test_an_idle_tick_reads_and_redraws_nothing_and_a_new_count_shows(tab):
    tab.sensor("live", SENSOR)
    counters = tab.state_root / "counters"
    counters.mkdir(parents=True, exist_ok=True, mode=0o700)
    counter = counters / "live.all.json"
    counter.write_text(json.dumps({"dispatched": 3, "delivered": 3}))
    counter.chmod(0o600)
    age_everything(tab.state_root, 60)
    seen: dict[str, object] = {}

    async def scenario(pilot):
        main = main_screen(pilot)
        table = main.table
        seen["shown"] = cell(pilot, "r:live/all", "delivered")
        footer = main.query_one("#live")
        snap, updates, text = main.snap, table._update_count, str(footer.render())
        for _ in range(3):  # nothing changed: nothing read, nothing redrawn
            main.tick()
            await pilot.pause()
        seen["idle"] = (
            main.snap is snap,
            table._update_count - updates,
            str(footer.render()) == text,
        )

        counter.write_text(json.dumps({"dispatched": 4, "delivered": 4}))
        then = time.time() - 30  # still old, but not the time it had: a change
        os.utime(counter, (then, then))
        main.tick()
        await pilot.pause()
        seen["changed"] = (main.snap is not snap, cell(pilot, "r:live/all", "delivered"))
        snap, updates = main.snap, table._update_count
        main.tick()
        await pilot.pause()
        seen["idle again"] = (main.snap is snap, table._update_count - updates)

    drive(scenario)
    assert seen["shown"] == "3"
    assert seen["idle"] == (True, 0, True)
    assert seen["changed"] == (True, "4")
    assert seen["idle again"] == (True, 0)
