"""The sensors tab's table and its actions, driven with Pilot against a throwaway
install; each test checks the YAML files (and state) afterwards, not the widgets alone."""

from __future__ import annotations

import json

from ways_sensors.tui.screens import ConfirmDialog, HelpScreen, NameDialog, PreviewScreen

from .conftest import HAND_WRITTEN, cell, drive, main_screen, message, select, settle, transcript


def test_the_table_lists_every_sensor_rule_and_refused_project_sensor(tab):
    tab.sensor("team", HAND_WRITTEN)
    tab.sensor(
        "theirs",
        "rules:\n  r:\n    sections: [tool_call]\n"
        "    dispatch: {http: {url: 'https://collector.example/x'}}\n",
        layer="project",
    )
    seen = {}

    async def scenario(pilot):
        main = main_screen(pilot)
        seen["keys"] = [r.key for r in main.shown]
        seen["calls"] = {
            k: cell(pilot, "r:team/calls", k)
            for k in ("layer", "state", "sections", "where", "target", "timeout", "off")
        }
        seen["audit"] = cell(pilot, "s:audit", "layer")
        refused = next(r for r in main.shown if r.kind == "refused")
        seen["refused"] = (refused.cells["name"], refused.cells["state"], refused.detail)

    drive(scenario)
    assert seen["keys"][:3] == ["s:audit", "r:audit/all", "s:risky-actions"]
    assert {"s:team", "r:team/calls", "r:team/prompts"} <= set(seen["keys"])
    assert seen["calls"] == {
        "layer": "user",
        "state": "on",
        "sections": "tool_call,tool_result",
        "where": "tool_name=Bash",
        "target": "file ~/out/calls.jsonl",
        "timeout": "2s",
        "off": "no",
    }
    assert seen["audit"] == "shipped (ro)"
    name, state, why = seen["refused"]
    assert (name, state) == ("theirs", "refused")
    assert "not in ways.project_sensors" in why


def test_space_toggles_a_rule_and_a_sensor_keeping_comments(tab):
    path = tab.sensor("team", HAND_WRITTEN)

    async def scenario(pilot):
        await select(pilot, "r:team/calls")
        await pilot.press("space")
        assert cell(pilot, "r:team/calls", "state") == "off"
        assert "take effect in running sessions at their next event" in message(pilot)
        await select(pilot, "s:team")
        await pilot.press("space")
        assert cell(pilot, "s:team", "state") == "off"
        assert cell(pilot, "r:team/prompts", "state") == "off (sensor)"

    drive(scenario)
    text = path.read_text()
    assert "# Our team's sensor. Keep the comments!" in text
    assert "    timeout: 2s      # generous\n" in text
    assert "    sections: [tool_call, tool_result]   # both halves\n" in text
    got = tab.ways("settings", "get", "ways.sensors.team.rules.calls.enabled").stdout.strip()
    assert got == "false"
    assert tab.ways("settings", "get", "ways.sensors.team.enabled").stdout.strip() == "false"
    lst = json.loads(tab.ways("sensors", "list", "--json").stdout)
    team = next(s for s in lst["sensors"] if s["name"] == "team")
    assert [r["enabled"] for r in team["rules"]] == [False, False]

    async def back_on(pilot):
        await select(pilot, "s:team")
        await pilot.press("space")
        await select(pilot, "r:team/calls")
        await pilot.press("space")

    drive(back_on)
    assert tab.ways("settings", "get", "ways.sensors.team.rules.calls.enabled").stdout == "true\n"
    assert "    timeout: 2s      # generous\n" in path.read_text()


def test_a_never_previewed_rule_opens_its_preview_instead_of_enabling(tab):
    transcript(tab)
    made = tab.ways(
        "settings",
        "set",
        "ways.sensors.fresh.rules.bash",
        "{sections: [tool_call], where: {data.tool_name: Bash}, "
        "dispatch: {file: {path: ~/out/bash.jsonl}}}",
    )
    assert made.returncode == 0, made.stderr
    path = tab.user_sensors / "fresh.yaml"
    shown = {}

    async def scenario(pilot):
        await select(pilot, "r:fresh/bash")
        assert cell(pilot, "r:fresh/bash", "state") == "off, preview"
        await pilot.press("space")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, PreviewScreen)
        shown["summary"] = str(screen.query_one("#summary").render())
        shown["sent"] = str(screen.query_one("#sent").render())
        assert "enabled: false" in path.read_text()  # the space did not enable it
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, PreviewScreen)
        await select(pilot, "r:fresh/bash")
        await pilot.press("space")
        assert cell(pilot, "r:fresh/bash", "state") == "on"

    drive(scenario)
    assert "1 would be sent; nothing was dispatched" in shown["summary"]
    assert "tool_call 1" in shown["summary"]
    assert '"command": "git push https://x:[REDACTED:github-token:' in shown["sent"]
    assert "Zq4v" not in shown["sent"]  # masked as the consumer would receive it
    assert not (tab.home / "out").exists()  # nothing dispatched
    assert "enabled: true" in path.read_text()
    previews = json.loads((tab.state_root / "previews.json").read_text())
    assert previews["fresh/bash"]["seen"] is not None


def test_p_previews_a_rule_and_names_a_missing_session(tab):
    tab.sensor("team", HAND_WRITTEN)
    out = {}

    async def scenario(pilot):
        await select(pilot, "r:team/prompts")
        await pilot.press("p")
        await settle(pilot)
        out["missing"] = str(pilot.app.screen.query_one("#summary").render())
        transcript(tab, session="5c1e7a2b-1111-4e8a-9b6c-0d2f1a3b4c5d")
        await pilot.press("s")
        await pilot.press(*"5c1e7a2b-1111-4e8a-9b6c-0d2f1a3b4c5d", "enter")
        await settle(pilot)
        out["found"] = str(pilot.app.screen.query_one("#summary").render())

    drive(scenario)
    assert "no transcript found for project" in out["missing"]
    assert "5c1e7a2b-1111-4e8a-9b6c-0d2f1a3b4c5d.jsonl" in out["found"]
    assert "user_prompt 1" in out["found"]


def test_copy_rename_and_delete_with_confirmation(tab):
    tab.sensor("team", HAND_WRITTEN)

    async def scenario(pilot):
        await select(pilot, "r:audit/all")  # a rule's row acts on its sensor
        await pilot.press("c")
        assert isinstance(pilot.app.screen, NameDialog)
        await pilot.press("ctrl+u", *"my-audit", "enter")
        await pilot.pause()
        assert main_screen(pilot).current().key == "s:my-audit"
        await pilot.press("r")
        await pilot.press("ctrl+u", *"team-audit", "enter")
        await pilot.pause()
        assert main_screen(pilot).current().key == "s:team-audit"
        await select(pilot, "s:team")
        await pilot.press("d")
        assert isinstance(pilot.app.screen, ConfirmDialog)
        await pilot.press("n")
        assert "nothing deleted" in message(pilot)
        await pilot.press("d", "y")
        await pilot.pause()
        assert "s:team" not in [r.key for r in main_screen(pilot).shown]

    drive(scenario)
    assert not (tab.user_sensors / "my-audit.yaml").exists()
    copied = (tab.user_sensors / "team-audit.yaml").read_text()
    assert "copied from audit" in copied and "enabled: false" in copied
    assert not (tab.user_sensors / "team.yaml").exists()
    previews = json.loads((tab.state_root / "previews.json").read_text())
    assert previews["team-audit/all"]["seen"] is None  # the copy waits for its preview


def test_shipped_sensors_are_read_only(tab):
    before = sorted(p.name for p in tab.root.rglob("*.yaml"))

    async def scenario(pilot):
        await select(pilot, "s:audit")
        for key in ("r", "d"):
            await pilot.press(key)
            assert not isinstance(pilot.app.screen, (NameDialog, ConfirmDialog))
            text = message(pilot)
            assert "audit is a shipped sensor: read-only" in text, text
            assert "c copies it" in text

    drive(scenario)
    assert sorted(p.name for p in tab.root.rglob("*.yaml")) == before


def test_filter_narrows_as_you_type_and_enter_selects_the_first_match(tab):
    tab.sensor("team", HAND_WRITTEN)
    seen = {}

    async def scenario(pilot):
        await pilot.press("slash")
        await pilot.press(*"prompts.j")
        seen["typing"] = [r.key for r in main_screen(pilot).shown]
        await pilot.press("enter")
        main = main_screen(pilot)
        seen["focused"] = pilot.app.focused is main.table
        seen["current"] = main.current().key
        await pilot.press("space")  # the table has the keys again
        await pilot.press("escape")
        seen["cleared"] = len(main.shown)

    drive(scenario)
    assert seen["typing"] == ["r:team/prompts"]
    assert seen["focused"] and seen["current"] == "r:team/prompts"
    assert "enabled: false" in (tab.user_sensors / "team.yaml").read_text()
    assert seen["cleared"] > 5


def test_help_and_quit(tab):
    async def scenario(pilot):
        await pilot.press("question_mark")
        assert isinstance(pilot.app.screen, HelpScreen)
        text = str(pilot.app.screen.query_one("Static").render())
        assert "space" in text and "at their next event" in text
        await pilot.press("escape")
        await pilot.press("q")

    app = drive(scenario)
    assert app.return_code == 0


def test_columns_keep_their_widths_and_the_name_stays_pinned(tab):
    """The filter narrowing the rows (or a dialog) never changes a column's width; the
    name column is fixed, so it stays on screen when the table scrolls right; the
    detail pane names the selected rule's mode, delivery, target and where."""
    tab.sensor("team", HAND_WRITTEN)
    seen = {}

    async def scenario(pilot):
        main = main_screen(pilot)
        table = main.table
        before = {k.value: c.width for k, c in table.columns.items()}
        await pilot.press("slash", *"calls")
        await pilot.pause()
        seen["narrowed"] = len(main.shown)
        seen["same"] = before == {k.value: c.width for k, c in table.columns.items()}
        await pilot.press("enter")
        await select(pilot, "r:team/calls")
        seen["fixed"] = table.fixed_columns
        seen["first"] = next(iter(table.columns)).value
        seen["detail"] = str(main.query_one("#detail").render())
        await pilot.press("question_mark")
        await pilot.pause()
        seen["dialog"] = before == {k.value: c.width for k, c in table.columns.items()}

    drive(scenario, size=(80, 30))
    assert seen["narrowed"] < 6 and seen["same"] and seen["dialog"]
    assert seen["fixed"] == 1 and seen["first"] == "name"
    for words in ("mode: async", "delivery: best_effort", "where: tool_name=Bash", "to: file "):
        assert words in seen["detail"], seen["detail"]


def test_the_preview_takes_a_transcript_path_and_says_why_records_were_not_sent(tab):
    """`s` in the preview takes a session file's path as well as an id; under the
    summary, explain's reasons for the records the rule would not send."""
    tab.sensor("team", HAND_WRITTEN)
    recorded = transcript(tab)
    elsewhere = tab.root / "elsewhere.jsonl"
    elsewhere.write_bytes(recorded.read_bytes())
    recorded.unlink()  # only the path can find it now
    shown = {}

    async def scenario(pilot):
        await select(pilot, "r:team/calls")
        await pilot.press("p")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, PreviewScreen)
        shown["before"] = str(screen.query_one("#summary").render())
        await pilot.press("s")
        await pilot.press(*str(elsewhere), "enter")
        await settle(pilot)
        shown["summary"] = str(screen.query_one("#summary").render())

    drive(scenario)
    assert "no transcript found" in shown["before"]
    assert "elsewhere.jsonl" in shown["summary"], shown["summary"]
    assert "would be sent" in shown["summary"]
    assert "not sent: section user_prompt not selected" in shown["summary"], shown["summary"]
