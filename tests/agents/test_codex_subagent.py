"""Codex: a subagent's failing command is a failure (issue 21 item 7).

A recorded real Codex session (tests/fixtures/codex-<version>-subagent, recorded by
scripts/record_agents_fixtures.py codex-subagent) spawns a subagent, a thread with its
own rollout, whose one command exits 3. Its PostToolUse names the subagent's rollout as
`transcript_path`, and that file has the exit code, which the builder reads (docs/
agents.md said this was not recovered: no recorded session could show it). The session
goes through the wired hook, each file as it stood when its event ran, then the real
dispatcher."""

from __future__ import annotations

import json

from ..conftest import REPO
from ..helpers import dispatcher_lock
from .fixtures import dispatch, everything, of, records, run_hook

FOLDER = REPO / "tests" / "fixtures" / "codex-0.169.0-subagent"


def test_a_subagents_failing_command_is_a_failure(install):
    meta = json.loads((FOLDER / "fixture.json").read_text())
    lines = [json.loads(x) for x in (FOLDER / "hooks.jsonl").read_text().splitlines()]
    out = install.root / "all.jsonl"
    install.sensor("all", everything(out))
    home = install.root / "agent-home"
    home.mkdir()
    copies = {path: home / name for path, name in meta["session_files"].items()}
    data = {path: (FOLDER / name).read_bytes() for path, name in meta["session_files"].items()}
    sid = lines[0]["payload"]["session_id"]
    with dispatcher_lock(install, sid):
        for line in lines:
            p = dict(line["payload"])
            for key in ("transcript_path", "agent_transcript_path"):
                if p.get(key) in copies:
                    if key == "transcript_path" and line["size"] >= 0:
                        copies[p[key]].write_bytes(data[p[key]][: line["size"]])
                    p[key] = str(copies[p[key]])
            run_hook(install, "codex", p)
    for path, copy in copies.items():
        copy.write_bytes(data[path])
    dispatch(install, sid)
    recs = records(out)
    started = [r for r in of(recs, "subagent") if r["data"]["phase"] == "start"]
    assert len(started) == 1
    agent = started[0]["agent_id"]
    results = {r["data"]["tool_use_id"]: r for r in of(recs, "tool_result")}
    inside = [r for r in results.values() if r["agent_id"] == agent]
    assert [(r["data"]["status"], r["data"].get("exit_code")) for r in inside] == [("failure", 3)]
    assert inside[0]["data"]["error"].startswith("Exit code 3")
    mine = [r for r in results.values() if r["agent_id"] is None]
    assert len(mine) == 2  # spawn_agent, then the wait for it (Codex names it as it likes)
    assert {r["data"]["status"] for r in mine} == {"success"}
