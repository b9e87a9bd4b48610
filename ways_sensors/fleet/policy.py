"""What `ways status` reads to say when an agent's settings keep ways from recording.

Each finding names the agent, why, and the file that says so:

* `managed-only`: Claude Code's managed settings set `allowManagedHooksOnly` and ways
  is wired only at user or project level, which Claude Code then ignores.
* `hooks-disabled`: `disableAllHooks` is in force over where ways is wired (in the
  managed settings it turns off every hook; in user, project or local settings, the
  hooks of those levels only), or Codex's `[features] hooks = false` (config.toml or
  the administrator's requirements.toml).
* `ways-missing`: a wired command names an interpreter or launcher that no longer
  exists (an uninstall, a moved venv): its shell guard exits 0, recording nothing.
* `not-wired`: ways is wired for one agent, and another agent is installed (its
  configuration folder exists, or its command is on PATH) without wiring.

Claude Code's managed settings are `managed-settings.json` and then the drop-ins of
`managed-settings.d/` in name order, a later file's key winning; user, project and
local settings in that order of precedence, local highest. Files that are missing or
unreadable count as empty: status reports, it does not refuse.
"""

from __future__ import annotations

import glob
import json
import os
import shlex
import shutil
from dataclasses import dataclass
from typing import Any

from .. import agents
from ..agents.wired import is_our_command
from .places import CLAUDE_DROPINS, CLAUDE_MANAGED, PLACES, read_wiring, system_root

BINARIES = {
    "claude-code": "claude",
    "codex": "codex",
    "gemini": "gemini",
    "cursor": "cursor-agent",
    "copilot": "copilot",
}


@dataclass(frozen=True)
class Finding:
    agent: str
    kind: str  # managed-only | hooks-disabled | ways-missing | not-wired
    file: str
    why: str

    def as_json(self) -> dict[str, str]:
        return {"agent": self.agent, "kind": self.kind, "file": self.file, "why": self.why}

    def line(self) -> str:
        return f"{self.agent}: {self.why} ({self.file})"


def _read(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _commands(data: dict[str, Any]) -> list[str]:
    """Every handler's command line in a hooks object of either shape."""
    out: list[str] = []
    hooks = data.get("hooks")
    for handlers in hooks.values() if isinstance(hooks, dict) else ():
        for h in handlers if isinstance(handlers, list) else ():
            inner = h.get("hooks") if isinstance(h, dict) else None
            for x in inner if isinstance(inner, list) else [h]:
                if isinstance(x, dict):
                    out += [v for k, v in x.items() if k in ("command", "bash")]
    return [c for c in out if isinstance(c, str)]


def ours_in(agent: str, data: dict[str, Any]) -> list[str]:
    """The commands of ours for `agent` among a settings object's hooks."""
    return [c for c in _commands(data) if is_our_command(c, agent)]


def _missing(command: str) -> str | None:
    """The interpreter or launcher a wired command names that is gone, if one is."""
    guard = command.split("||")[0]
    try:
        words = shlex.split(guard)
    except ValueError:
        return None
    named = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-x", "-f")]
    if not named and words and os.path.isabs(words[0]):
        named = [words[0]]  # an older form: `/path/to/ways hook sensors`
    return next((p for p in named if not os.path.exists(p)), None)


def findings(project: str | None = None, root: str | None = None) -> list[Finding]:
    root = system_root(root)
    project = project or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    out = _claude(project, root)
    wired: dict[str, list[tuple[str, str]]] = {}  # agent -> [(file, command)]
    for name in PLACES:
        adapter = agents.adapter(name)
        for path in (adapter.settings_path(None), os.path.join(root, PLACES[name].path)):
            data = read_wiring(path)
            wired.setdefault(name, []).extend((path, c) for c in ours_in(name, data))
    out += _codex(root, bool(wired["codex"]))
    for name, found in wired.items():
        gone = {(path, g) for path, c in found if (g := _missing(c))}
        for path, g in sorted(gone):
            out.append(Finding(name, "ways-missing", path, f"the hook runs {g}, which is gone"))
    if any(wired.values()):
        for name in PLACES:
            if not wired[name] and _installed(name):
                path = agents.adapter(name).settings_path(None)
                why = f"installed but not wired (ways reconcile --agent {name})"
                out.append(Finding(name, "not-wired", path, why))
    return out


def _installed(name: str) -> bool:
    adapter = agents.adapter(name)
    home = getattr(adapter, "config_home", None)
    folder = home(None) if home else os.path.dirname(adapter.settings_path(None))
    return os.path.isdir(folder) or shutil.which(BINARIES[name]) is not None


def _claude(project: str, root: str) -> list[Finding]:
    agent = agents.DEFAULT
    managed = [os.path.join(root, CLAUDE_MANAGED)]
    managed += sorted(glob.glob(os.path.join(root, CLAUDE_DROPINS, "*.json")))
    user = agents.adapter(agent).settings_path(None)
    local = [
        user,
        os.path.join(project, ".claude", "settings.json"),
        os.path.join(project, ".claude", "settings.local.json"),
    ]
    m_data = [(p, _read(p)) for p in managed]
    l_data = [(p, _read(p)) for p in local]
    in_managed = any(ours_in(agent, d) for _, d in m_data)
    in_local = [p for p, d in l_data if ours_in(agent, d)]
    if not in_managed and not in_local:
        return []

    def last(items: list[tuple[str, dict[str, Any]]], key: str) -> str | None:
        said = [(p, d[key]) for p, d in items if key in d]
        return said[-1][0] if said and said[-1][1] is True else None

    out = []
    off = last(m_data, "disableAllHooks")
    if off:
        out.append(Finding(agent, "hooks-disabled", off, "disableAllHooks turns off every hook"))
        return out
    only = last(m_data, "allowManagedHooksOnly")
    if only and not in_managed:
        why = "allowManagedHooksOnly ignores ways' user-level wiring (ways reconcile --managed)"
        out.append(Finding(agent, "managed-only", only, why))
    off = last(l_data, "disableAllHooks")
    if off and not in_managed:
        out.append(Finding(agent, "hooks-disabled", off, "disableAllHooks turns off ways' hook"))
    return out


def _codex(root: str, wired: bool) -> list[Finding]:
    """Codex's hooks feature switched off, by the administrator or the user."""
    if not wired:
        return []
    import importlib

    try:  # by name: the type checker holds this module to 3.10, which has no tomllib
        tomllib = importlib.import_module("tomllib")
    except ImportError:  # Python 3.10: Codex's TOML is not read
        return []

    from ..agents.codex.rollout import codex_home

    requirements = os.path.join(root, "etc/codex/requirements.toml")
    for path in (requirements, os.path.join(codex_home(), "config.toml")):
        try:
            with open(path, "rb") as f:
                features = tomllib.load(f).get("features")
        except (OSError, ValueError):
            continue
        off = isinstance(features, dict) and any(
            features.get(k) is False for k in ("hooks", "codex_hooks")
        )
        if off:
            return [Finding("codex", "hooks-disabled", path, "[features] hooks = false")]
    return []
