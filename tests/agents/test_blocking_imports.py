"""Every agent's blocking path loads what a matching rule needs and no more: a rule on
`tool_call` dispatching to a command, run through the real hook with each agent's own
tool-call payload (tests/fixtures/), loads none of the modules that cost a blocking hook
the most (bench/RESULTS.md, Blocking path cost), and still delivers the masked record."""

from __future__ import annotations

import json

import pytest

from ..helpers import appending_consumer, modules_on_path
from .fixtures import CODEX, COPILOT, CURSOR, GEMINI, load, run_hook

# each agent's fixture and the payload event of a tool call
AGENTS = {"gemini": (GEMINI, "BeforeTool"), "codex": (CODEX, "PreToolUse")}
AGENTS |= {"cursor": (CURSOR, "preToolUse"), "copilot": (COPILOT, "PreToolUse")}
COSTLY = {"re", "enum", "functools", "collections", "json", "threading", "contextlib"}
COSTLY |= {"signal", "typing", "dataclasses", "inspect", "hashlib", "_hashlib", "subprocess"}
COSTLY |= {"datetime", "_strptime", "calendar", "locale", "msgspec", "site", "fnmatch", "ctypes"}


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_matching_blocking_rule_loads_no_costly_module(install, tmp_path, agent):
    folder, event = AGENTS[agent]
    fx = load(folder)
    calls = [x for x in fx.lines if (x["payload"].get("hook_event_name") or x["event"]) == event]
    line = calls[0]
    argv_event = () if line["payload"].get("hook_event_name") else ("--event", line["event"])
    script, out = appending_consumer(tmp_path)
    install.sensor(
        "blk",
        "rules:\n  r:\n    sections: [tool_call]\n    mode: blocking\n"
        f"    dispatch: {{command: {{argv: ['{script}']}}}}\n",
    )
    run_hook(install, agent, line["payload"], argv_event[1] if argv_event else None)
    mods = modules_on_path(
        install, tmp_path, json.dumps(line["payload"]).encode(), ("--agent", agent, *argv_event)
    )
    assert f"ways_sensors.agents.{agent}.builder" in mods
    assert not (COSTLY & mods), COSTLY & mods
    first, second = [json.loads(x) for x in out.read_text().splitlines()]
    assert first["section"] == second["section"] == "tool_call"
    assert (first["rule_seq"], second["rule_seq"]) == (1, 2)
