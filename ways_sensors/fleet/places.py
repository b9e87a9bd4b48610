"""Where each agent reads its system-wide (managed) hook wiring, on Linux.

| agent | file | kind |
|---|---|---|
| claude-code | /etc/claude-code/managed-settings.d/50-ways-sensors.json | a drop-in of ours |
| codex | /etc/codex/requirements.toml | merged: a block of ours (requirements.py) |
| gemini | /etc/gemini-cli/settings.json | merged (system settings), hooks switched on |
| cursor | /etc/cursor/hooks.json | merged (enterprise hooks) |
| copilot | /etc/github-copilot/policy.d/ways-sensors.json | a policy file of ours |

A file "of ours" holds nothing but our wiring and is deleted by `--remove`; a merged
file is the administrator's, edited in place (its other keys, hooks and order kept).
Each agent runs these hooks as managed: Claude Code even under
`allowManagedHooksOnly`, Codex without the /hooks trust review (requirements are its
administrator-enforced layer, requirements.py), Copilot CLI even under
`disableAllHooks`. Gemini CLI runs hooks only
while its hooks system is on: `hooksConfig.enabled` (on by default in current
releases, off in earlier ones; a user could turn it off) and, in builds before that
key, `tools.enableHooks`; both are set in the system settings, which outrank the
user's, and current releases ignore the older key. The macOS and Windows places are
in docs/fleet.md.

Every path is under a system root, `/` unless `--root DIR` (reconcile) or
`$WAYS_SYSTEM_ROOT` (status) stages or reads the tree elsewhere.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

CLAUDE_MANAGED = "etc/claude-code/managed-settings.json"
CLAUDE_DROPINS = "etc/claude-code/managed-settings.d"


Switch = tuple[tuple[str, ...], object]  # (the key's path in the file, its value)


@dataclass(frozen=True)
class Place:
    agent: str
    path: str  # relative to the system root
    own_file: bool  # ours alone: created by wiring, deleted by --remove
    switches: tuple[Switch, ...] = ()  # set with the wiring, put back by --remove


GEMINI_SWITCHES: tuple[Switch, ...] = (
    (("hooksConfig", "enabled"), True),
    (("tools", "enableHooks"), True),
)
PLACES = {
    "claude-code": Place("claude-code", CLAUDE_DROPINS + "/50-ways-sensors.json", True),
    "codex": Place("codex", "etc/codex/requirements.toml", False),
    "gemini": Place("gemini", "etc/gemini-cli/settings.json", False, GEMINI_SWITCHES),
    "cursor": Place("cursor", "etc/cursor/hooks.json", False),
    "copilot": Place("copilot", "etc/github-copilot/policy.d/ways-sensors.json", True),
}


def system_root(root: str | None = None) -> str:
    """The root the system paths are under: `root`, else $WAYS_SYSTEM_ROOT, else /."""
    return os.path.abspath(root or os.environ.get("WAYS_SYSTEM_ROOT") or "/")


def path_of(agent: str, root: str | None = None) -> str:
    return os.path.join(system_root(root), PLACES[agent].path)


def read_wiring(path: str) -> dict[str, object]:
    """A settings file's data, JSON or (Codex's requirements) TOML; {} when missing or
    unreadable: status reports, it does not refuse."""
    if path.endswith(".toml"):
        from .requirements import read

        return read(path)
    import json

    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
