"""The sensors tab's form (validated as `ways settings set` validates, saved through the
same writer), a new rule, `f` against real loopback consumers, and live counts from a
real detached dispatcher."""

from __future__ import annotations

import asyncio
import json
import time

from textual.widgets import Button, Checkbox, Input, TextArea

from ways_sensors import agents
from ways_sensors.tui.form import RuleForm

from ..servers import Server
from .conftest import HAND_WRITTEN, cell, drive, main_screen, message, select, settle


def error_of(form: RuleForm, field: str) -> str:
    return str(form.query_one(f"#error-{field}").render())


async def retype(pilot, form: RuleForm, field: str, text: str) -> None:
    box = form.query_one(f"#field-{field}", Input)
    box.focus()
    await pilot.press("end", "ctrl+u", *text)
    await pilot.pause()


def test_the_form_refuses_an_invalid_value_with_the_commands_message_then_saves(tab):
    path = tab.sensor("team", HAND_WRITTEN)
    before = path.read_text()
    refused = tab.ways("settings", "set", "ways.sensors.team.rules.calls.timeout", "soon")
    assert refused.returncode == 3 and path.read_text() == before
    seen = {}

    async def scenario(pilot):
        await select(pilot, "r:team/calls")
        await pilot.press("enter")
        form = pilot.app.screen
        assert isinstance(form, RuleForm)
        await retype(pilot, form, "timeout", "soon")
        seen["error"] = error_of(form, "timeout")
        seen["disabled"] = form.query_one("#save", Button).disabled
        await pilot.press("ctrl+s")
        seen["still"] = pilot.app.screen is form
        seen["general"] = str(form.query_one("#general").render())
        seen["unchanged"] = path.read_text() == before
        await retype(pilot, form, "timeout", "750ms")
        seen["cleared"] = error_of(form, "timeout")
        await pilot.press("ctrl+s")
        await pilot.pause()
        seen["back"] = not isinstance(pilot.app.screen, RuleForm)
        seen["message"] = message(pilot)
        seen["cell"] = cell(pilot, "r:team/calls", "timeout")

    drive(scenario)
    assert seen["error"].startswith("ways.sensors.team.rules.calls.timeout: ")
    assert refused.stderr.startswith("ways: " + seen["error"] + ";"), (refused.stderr, seen)
    assert seen["disabled"] and seen["still"] and seen["unchanged"]
    assert "not saved" in seen["general"]
    assert seen["cleared"] == "" and seen["back"]
    assert "saved 1 field(s) of team/calls" in seen["message"]
    assert "running sessions pick it up at their next event" in seen["message"]
    assert seen["cell"] == "0.75s"
    assert path.read_text() == before.replace("timeout: 2s", "timeout: 750ms")


def test_snippets_are_checked_and_off_machine_and_unmasked_warn(tab):
    path = tab.sensor("team", HAND_WRITTEN)
    seen = {}

    async def scenario(pilot):
        await select(pilot, "r:team/calls")
        await pilot.press("enter")
        form = pilot.app.screen
        where = form.query_one("#field-where", TextArea)
        where.clear()
        where.insert("data.tool_name: [Bash\n")
        await pilot.pause()
        seen["yaml"] = error_of(form, "where")
        where.clear()
        where.insert("data.tool_name: {matches: '('}\n")
        await pilot.pause()
        seen["regex"] = error_of(form, "where")
        where.clear()
        where.insert("data.tool_name: {in: [Bash, Edit]}\n")
        dispatch = form.query_one("#field-dispatch", TextArea)
        dispatch.clear()
        dispatch.insert("http:\n  url: https://collector.example/v1\n")
        await pilot.pause()
        seen["warnings"] = str(form.query_one("#warnings").render())
        form.query_one("#field-redact").value = "none"
        await pilot.pause()
        seen["warnings2"] = str(form.query_one("#warnings").render())
        await pilot.press("ctrl+s")
        await pilot.pause()
        seen["off"] = cell(pilot, "r:team/calls", "off")

    drive(scenario)
    assert seen["yaml"].startswith("ways.sensors.team.rules.calls.where: not valid YAML at line")
    regex = tab.ways(
        "settings", "set", "ways.sensors.team.rules.calls.where", "{data.tool_name: {matches: '('}}"
    )
    assert regex.returncode == 3 and regex.stderr.startswith("ways: " + seen["regex"] + ";")
    assert "may send session content off this machine, to collector.example" in (seen["warnings"])
    assert "redact: none dispatches unmasked session content" in seen["warnings2"]
    assert seen["off"] == "content"
    text = path.read_text()
    assert "# Our team's sensor. Keep the comments!" in text and "# generous" in text
    lint = json.loads(tab.ways("sensors", "lint", "--json").stdout)
    linted = {p["message"] for p in lint["warnings"] if p["rule"] == "calls"}
    shown = {line.removeprefix("warning: ") for line in seen["warnings2"].splitlines()}
    assert linted == shown and len(shown) == 2  # the same words as lint
    got = json.loads(
        tab.ways("settings", "get", "ways.sensors.team.rules.calls.where", "--json").stdout
    )
    assert got["value"] == {"data.tool_name": {"in": ["Bash", "Edit"]}}


def test_n_makes_a_new_rule_that_starts_disabled_and_waits_for_its_preview(tab):
    path = tab.sensor("team", HAND_WRITTEN)
    seen = {}

    async def scenario(pilot):
        await select(pilot, "r:team/calls")
        await pilot.press("n")
        await pilot.press(*"fresh", "enter")
        await pilot.pause()
        form = pilot.app.screen
        assert isinstance(form, RuleForm) and form.new, message(pilot)
        seen["enabled_locked"] = form.query_one("#field-enabled", Checkbox).disabled
        await retype(pilot, form, "sections", "[user_prompt, tool_call]")
        await pilot.press("ctrl+s")
        await pilot.pause()
        seen["message"] = message(pilot)
        seen["state"] = cell(pilot, "r:team/fresh", "state")
        await select(pilot, "r:team/fresh")
        await pilot.press("space")  # never previewed: its preview opens instead
        await settle(pilot)
        seen["screen"] = type(pilot.app.screen).__name__

    drive(scenario)
    assert seen["enabled_locked"]
    assert "team/fresh saved disabled" in seen["message"]
    assert seen["state"] == "off, preview"
    assert seen["screen"] == "PreviewScreen"
    got = json.loads(tab.ways("settings", "get", "ways.sensors.team.rules.fresh", "--json").stdout)
    assert got["value"] == {
        "sections": ["user_prompt", "tool_call"],
        "dispatch": {"file": {"path": "~/fresh.jsonl"}},
        "enabled": False,
    }
    assert "# Our team's sensor. Keep the comments!" in path.read_text()


def test_f_fires_a_test_record_and_says_delivered_refused_or_timed_out(tab):
    ok, no, hang = Server("accept"), Server("script", script=[(400, {})]), Server("hang")
    try:
        tab.sensor(
            "remote",
            "rules:\n"
            + "".join(
                f"  {name}:\n    sections: [tool_call]\n    timeout: 1s\n"
                f"    dispatch: {{http: {{url: '{s.url}'}}}}\n"
                for name, s in (("good", ok), ("bad", no), ("slow", hang))
            ),
        )
        seen = {}

        async def scenario(pilot):
            await select(pilot, "r:remote/good")
            await pilot.press("f")
            await settle(pilot)
            seen["one"] = message(pilot)
            await select(pilot, "s:remote")
            await pilot.press("f")
            await settle(pilot)
            seen["all"] = message(pilot).splitlines()

        drive(scenario)
        assert seen["one"].startswith("remote/good: delivered in ")
        assert " ms (timeout 1s) at " in seen["one"]
        lines = seen["all"]
        assert lines[0].startswith("remote/good: delivered in ")
        assert lines[1].startswith("remote/bad: refused (HTTP 400, permanent) in ")
        assert lines[2].startswith("remote/slow: timed out in ")
        assert len(ok.bodies) == 2 and all(b["test"] is True for b in ok.bodies)
        assert ok.bodies[0]["session_id"].startswith("ways-fire-")
        assert not (tab.state_root / "counters").exists()  # a test is never counted
        assert not (tab.state_root / "deadletters").exists()
    finally:
        for s in (ok, no, hang):
            s.close()


def test_live_counts_rise_from_a_real_dispatcher_without_a_key_press(tab, tmp_path):
    out = tmp_path / "live.jsonl"
    tab.sensor(
        "live",
        f"rules:\n  all:\n    sections: [user_prompt, tool_call]\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    sid = "5c1e7a2b-2222-4e8a-9b6c-0d2f1a3b4c5d"

    def hooks() -> None:
        for section in ("session_start", "user_prompt", "tool_call", "tool_call"):
            payload = {
                **agents.adapter(agents.DEFAULT).example(section),
                "session_id": sid,
                "cwd": str(tab.project),
            }
            assert tab.hook(payload).returncode == 0

    seen = {}

    async def scenario(pilot):
        seen["before"] = (
            cell(pilot, "r:live/all", "dispatched"),
            cell(pilot, "s:live", "delivered"),
        )
        await asyncio.to_thread(hooks)
        end = time.monotonic() + 30
        while time.monotonic() < end and cell(pilot, "r:live/all", "delivered") != "3":
            await pilot.pause(0.2)
        seen["after"] = (
            cell(pilot, "r:live/all", "dispatched"),
            cell(pilot, "s:live", "delivered"),
        )
        seen["live"] = str(main_screen(pilot).query_one("#live").render())

    drive(scenario)
    assert seen["before"] == ("0", "0")
    assert seen["after"] == ("3", "3")
    assert "live dispatchers: 1: 5c1e7a2b-2222-4e8a-9b6c-0d2f1a3b4c5d" in seen["live"]
    assert len(out.read_text().splitlines()) == 3


def test_saving_writes_the_sensors_own_file_at_the_chosen_layer(tab):
    theirs = tab.sensor("theirs", HAND_WRITTEN, layer="project")
    tab.config(f"ways:\n  project_sensors: [{tab.project}]\n")
    before = theirs.read_text()
    seen = {}

    async def scenario(pilot):
        await select(pilot, "r:audit/all")  # shipped: the user layer gets only the change
        await pilot.press("enter")
        form = pilot.app.screen
        form.query_one("#field-delivery").value = "best_effort"
        await pilot.pause()
        seen["target"] = str(form.query_one("#target").render())
        await pilot.press("ctrl+s")
        await pilot.pause()
        await select(pilot, "r:theirs/prompts")  # a project sensor: its project file
        await pilot.press("enter")
        form = pilot.app.screen
        seen["layer"] = form.query_one("#layer").value
        await retype(pilot, form, "timeout", "3s")
        await pilot.press("ctrl+s")
        await pilot.pause()
        seen["message"] = message(pilot)

    drive(scenario)
    assert seen["target"] == "saving writes the user layer: " + str(
        tab.user_sensors / "audit.yaml"
    ).replace(str(tab.home), "~")
    assert (tab.user_sensors / "audit.yaml").read_text() == (
        "rules:\n  all:\n    delivery: best_effort\n"
    )
    assert seen["layer"] == "project"
    assert theirs.read_text() == before.replace(
        "    dispatch: {file: {path: '~/out/prompts.jsonl'}}\n",
        "    dispatch: {file: {path: '~/out/prompts.jsonl'}}\n    timeout: 3s\n",
    )
    assert not (tab.user_sensors / "theirs.yaml").exists()
    assert "saved 1 field(s) of theirs/prompts" in seen["message"]
