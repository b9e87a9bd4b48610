"""`ways reconcile --agent NAME` for every agent, as a real command on files that already
hold other hooks: twice is once, --remove restores, a broken file is never overwritten,
--dry-run writes nothing; `--agent all` wires the agents whose folders exist; and the
command it wires, run as wired, spools the agent's events under the agent's name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..helpers import dispatcher_lock, entries

THEIRS = "/usr/local/bin/their-hook --flag"


def their_files(home: Path) -> dict[str, tuple[Path, dict]]:
    """Per agent: its hooks file, holding another tool's hooks and keys."""
    return {
        "claude-code": (
            home / ".claude" / "settings.json",
            {
                "model": "opus",
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": [{"type": "command", "command": THEIRS}]}
                    ]
                },
            },
        ),
        "codex": (
            home / ".codex" / "hooks.json",
            {
                "hooks": {
                    "Stop": [{"hooks": [{"type": "command", "command": THEIRS, "timeout": 5}]}]
                }
            },
        ),
        "gemini": (
            home / ".gemini" / "settings.json",
            {
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "hooks": {
                    "BeforeTool": [
                        {
                            "matcher": "write_file",
                            "hooks": [
                                {
                                    "name": "theirs",
                                    "type": "command",
                                    "command": THEIRS,
                                    "timeout": 5000,
                                }
                            ],
                        }
                    ]
                },
            },
        ),
        "cursor": (
            home / ".cursor" / "hooks.json",
            {
                "version": 1,
                "hooks": {
                    "afterFileEdit": [{"command": THEIRS}],
                    "preToolUse": [{"command": THEIRS, "matcher": "Shell"}],
                },
            },
        ),
        "copilot": (
            home / ".copilot" / "hooks" / "ways-sensors.json",
            {"version": 1, "hooks": {"PreToolUse": [{"type": "command", "bash": THEIRS}]}},
        ),
    }


AGENTS = ["claude-code", "codex", "gemini", "cursor", "copilot"]


def commands(settings: dict) -> list[str]:
    """Every command line in a hooks file, whatever its shape."""
    out = []

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k in ("command", "bash") and isinstance(v, str):
                    out.append(v)
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(settings)
    return out


@pytest.mark.parametrize("agent", AGENTS)
def test_twice_is_once_and_remove_restores_their_hooks(install, agent):
    path, theirs = their_files(install.home)[agent]
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(theirs, indent=2) + "\n")
    r = install.ways("reconcile", "--agent", agent)
    assert r.returncode == 0, r.stderr
    once = path.read_bytes()
    wired = json.loads(once)
    ours = [c for c in commands(wired) if "hook sensors" in c]
    assert ours and THEIRS in commands(wired)
    if agent != "claude-code":
        assert all(f"--agent {agent}" in c for c in ours)
    r = install.ways("reconcile", "--agent", agent)
    assert "nothing to change" in r.stdout and path.read_bytes() == once
    r = install.ways("reconcile", "--agent", agent, "--remove")
    assert r.returncode == 0, r.stderr
    assert json.loads(path.read_text()) == theirs


@pytest.mark.parametrize("agent", AGENTS)
def test_a_broken_file_is_never_overwritten(install, agent):
    path, _ = their_files(install.home)[agent]
    path.parent.mkdir(parents=True)
    path.write_text('{"hooks": {')
    r = install.ways("reconcile", "--agent", agent)
    assert r.returncode == 5 and "left untouched" in r.stderr
    assert path.read_text() == '{"hooks": {'


@pytest.mark.parametrize("agent", AGENTS)
def test_dry_run_shows_the_change_and_writes_nothing(install, agent):
    path, _ = their_files(install.home)[agent]
    r = install.ways("reconcile", "--agent", agent, "--dry-run")
    assert r.returncode == 0 and "hook sensors" in r.stdout and r.stdout.startswith("---")
    assert not path.exists()


def test_each_agent_s_own_shape(install):
    for agent in AGENTS[1:]:
        assert install.ways("reconcile", "--agent", agent).returncode == 0
    gemini = json.loads((install.home / ".gemini" / "settings.json").read_text())
    handler = gemini["hooks"]["BeforeTool"][0]["hooks"][0]
    assert handler["timeout"] == 15000 and handler["name"] == "ways-sensors"  # milliseconds
    assert set(gemini["hooks"]) == {
        "SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "PreCompress",
        "SessionEnd",
    }  # fmt: skip
    codex = json.loads((install.home / ".codex" / "hooks.json").read_text())
    assert codex["hooks"]["PostToolUse"][0]["hooks"][0]["timeout"] == 15  # seconds
    assert "matcher" not in codex["hooks"]["PostToolUse"][0]
    cursor = json.loads((install.home / ".cursor" / "hooks.json").read_text())
    assert cursor["version"] == 1 and "afterAgentThought" not in cursor["hooks"]
    copilot = json.loads((install.home / ".copilot" / "hooks" / "ways-sensors.json").read_text())
    assert copilot["hooks"]["PreToolUse"][0]["timeoutSec"] == 15
    assert copilot["hooks"]["subagentStart"][0]["bash"].endswith(
        "--agent copilot --event subagentStart"
    )


def test_codex_says_a_new_hook_runs_only_once_trusted(install):
    r = install.ways("reconcile", "--agent", "codex")
    [note] = [x for x in r.stdout.splitlines() if x.lstrip().startswith("note:")]
    assert "open /hooks and trust" in note and "silently" in note
    r = install.ways("reconcile", "--agent", "codex", "--remove")
    assert "note:" not in r.stdout
    r = install.ways("reconcile", "--agent", "gemini")
    assert "note:" not in r.stdout


def test_codex_home_is_honoured(install):
    env = {**install.env, "CODEX_HOME": str(install.root / "codex-home")}
    r = subprocess.run(
        [str(Path(sys.executable).parent / "ways"), "reconcile", "--agent", "codex"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert (install.root / "codex-home" / "hooks.json").exists()
    assert not (install.home / ".codex").exists()


def test_copilot_s_own_file_goes_with_remove_other_files_stay(install):
    folder = install.home / ".copilot" / "hooks"
    folder.mkdir(parents=True)
    other = folder / "other.json"
    other.write_text('{"version": 1, "hooks": {}}')
    assert install.ways("reconcile", "--agent", "copilot").returncode == 0
    assert (folder / "ways-sensors.json").exists()
    r = install.ways("reconcile", "--agent", "copilot", "--remove")
    assert r.returncode == 0 and not (folder / "ways-sensors.json").exists()
    assert other.read_text() == '{"version": 1, "hooks": {}}'


def test_all_wires_the_agents_whose_folders_exist(install):
    for d in (".claude", ".gemini", ".cursor"):
        (install.home / d).mkdir()
    r = install.ways("reconcile", "--agent", "all")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [x.split(":")[0] for x in lines if "skipped" in x] == ["codex", "copilot"]
    assert (install.home / ".claude" / "settings.json").exists()
    assert (install.home / ".gemini" / "settings.json").exists()
    assert (install.home / ".cursor" / "hooks.json").exists()
    assert not (install.home / ".codex").exists() and not (install.home / ".copilot").exists()
    again = install.ways("reconcile", "--agent", "all")
    assert again.stdout.count("nothing to change") == 3
    r = install.ways("reconcile", "--agent", "all", "--remove")
    assert r.returncode == 0 and r.stdout.count("removed") == 3


def test_all_goes_on_past_a_broken_file_and_says_so(install):
    for d in (".gemini", ".cursor"):
        (install.home / d).mkdir()
    (install.home / ".gemini" / "settings.json").write_text("{oops")
    r = install.ways("reconcile", "--agent", "all")
    assert r.returncode == 5
    assert "settings.json is not valid JSON" in r.stderr
    assert (install.home / ".cursor" / "hooks.json").exists()
    assert (install.home / ".gemini" / "settings.json").read_text() == "{oops"


PAYLOADS = {
    "codex": {"hook_event_name": "PreToolUse", "session_id": "sess-codex", "turn_id": "t",
              "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "call_1"},
    "gemini": {"hook_event_name": "BeforeTool", "session_id": "sess-gemini",
               "timestamp": "2026-11-30T00:00:00.000Z", "tool_name": "run_shell_command",
               "tool_input": {"command": "ls"}},
    "cursor": {"hook_event_name": "preToolUse", "conversation_id": "sess-cursor",
               "cursor_version": "2.0.77", "tool_name": "Shell",
               "tool_input": {"command": "ls"}, "tool_use_id": "t1"},
    "copilot": {"sessionId": "sess-copilot", "timestamp": 1795959602123, "agentName": "x"},
}  # fmt: skip


@pytest.mark.parametrize("agent", list(PAYLOADS))
def test_the_wired_command_spools_the_agent_s_events_under_its_name(install, tmp_path, agent):
    from .fixtures import everything

    install.sensor("all", everything(tmp_path / "o.jsonl"))
    assert install.ways("reconcile", "--agent", agent).returncode == 0
    path, _ = their_files(install.home)[agent]
    wired = json.loads(path.read_text())
    event = "subagentStart" if agent == "copilot" else PAYLOADS[agent]["hook_event_name"]
    handlers = wired["hooks"][event]
    if agent in ("codex", "gemini"):
        handlers = handlers[0]["hooks"]
    [command] = [h.get("command") or h.get("bash") for h in handlers]
    payload = PAYLOADS[agent]
    sid = payload.get("session_id") or payload.get("conversation_id") or payload["sessionId"]
    with dispatcher_lock(install, sid):
        r = subprocess.run(
            ["sh", "-c", command],
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=install.env,
            cwd=install.project,
        )
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        [entry] = entries(install, sid)
    assert (entry.agent, entry.event) == (agent, event)
