"""The sensors tab under test: the in-process app pointed at a throwaway install, and a
recorded session for previews.

`tab` sets HOME, the XDG roots and CLAUDE_PROJECT_DIR of the install in this process
(the app reads them through roots.py, like every command) and returns a driver that
runs the real app headless with Textual's Pilot, from a plain synchronous test.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from ways_sensors.agents.claude_code.replay import encoded_project
from ways_sensors.tui.app import MainScreen, SensorsApp

from ..conftest import Install

SIZE = (160, 48)

HAND_WRITTEN = """\
# Our team's sensor. Keep the comments!
description: Tool calls, to a local file   # shown in the tab
rules:
  # every shell call
  calls:
    sections: [tool_call, tool_result]   # both halves
    where: {data.tool_name: Bash}
    dispatch: {file: {path: '~/out/calls.jsonl'}}
    timeout: 2s      # generous
  prompts:
    sections: [user_prompt]
    dispatch: {file: {path: '~/out/prompts.jsonl'}}
"""

Scenario = Callable[[Pilot[Any]], Awaitable[None]]


def point_at(install: Install, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make this process see the install as its environment."""
    for k in list(os.environ):
        if k.startswith(("XDG_", "CLAUDE_", "WAYS_")):
            monkeypatch.delenv(k)
    for k, v in install.env.items():
        if k in ("HOME", "NO_COLOR") or k.startswith(("XDG_", "CLAUDE_")):
            monkeypatch.setenv(k, v)
    monkeypatch.chdir(install.project)


def drive(scenario: Scenario, size: tuple[int, int] = SIZE) -> SensorsApp:
    """Run the real app headless through `scenario`; returns the app afterwards."""
    app = SensorsApp()

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await scenario(pilot)

    asyncio.run(main())
    return app


@pytest.fixture
def tab(install: Install, monkeypatch: pytest.MonkeyPatch) -> Install:
    point_at(install, monkeypatch)
    return install


def main_screen(pilot: Pilot[Any]) -> MainScreen:
    for s in pilot.app.screen_stack:
        if isinstance(s, MainScreen):
            return s
    raise AssertionError(f"no main screen in {pilot.app.screen_stack}")


async def select(pilot: Pilot[Any], key: str) -> None:
    """Put the table's cursor on the row `key` (s:<sensor>, r:<sensor>/<rule>)."""
    main = main_screen(pilot)
    keys = [r.key for r in main.shown]
    assert key in keys, keys
    main.table.move_cursor(row=keys.index(key))
    await pilot.pause()


async def settle(pilot: Pilot[Any]) -> None:
    """Let workers (preview, fire) finish and their results land on screen."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


def message(pilot: Pilot[Any]) -> str:
    return str(main_screen(pilot).query_one("#message").render())


def cell(pilot: Pilot[Any], row: str, column: str) -> str:
    return str(main_screen(pilot).table.get_cell(row, column))


def transcript(install: Install, session: str = "5c1e7a2b-0000-4e8a-9b6c-0d2f1a3b4c5d") -> Path:
    """A small recorded session of the install's project, where `ways sensors test`
    and the preview look for it: a prompt, a Bash call carrying a token, its result."""
    folder = install.home / ".claude" / "projects" / encoded_project(str(install.project))
    folder.mkdir(parents=True, exist_ok=True)
    token = "ghp_" + "Zq4v" * 9
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "sessionId": session,
            "timestamp": "2026-11-29T10:00:00.000Z",
            "message": {"role": "user", "content": "push the branch"},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "sessionId": session,
            "timestamp": "2026-11-29T10:00:01.000Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": f"git push https://x:{token}@h/r.git"},
                    }
                ],
            },
        },
        {
            "type": "user",
            "uuid": "u2",
            "sessionId": session,
            "timestamp": "2026-11-29T10:00:02.000Z",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}],
            },
        },
    ]
    path = folder / f"{session}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path
