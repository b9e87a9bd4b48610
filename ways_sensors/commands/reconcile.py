"""`ways reconcile [--project DIR] [--remove] [--dry-run]`: wire the hook into Claude Code.

Puts one handler, `{"type": "command", "command": <launcher> hook sensors, "timeout": 15}`,
on the ten events of SPEC section 3 in `~/.claude/settings.json` (or
`DIR/.claude/settings.json`): in a group with matcher `*` on the three tool events,
in a group without a matcher on the others (they take none, or match everything).

A handler is ours when its command ends in `hook sensors` and names our launcher or
`ways`; an older form of ours is replaced in place, so re-running after an upgrade or
a move of the environment repairs the path. Every other hook, key and order is kept;
a second run changes nothing; `--remove` deletes our handlers and only the groups,
event lists and `hooks` key that became empty through that. An unparseable file is
never overwritten (exit 5). Writes hold the file's lock (files.locked, in the state root)
and replace it atomically, keeping its mode and indentation.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import sys
from typing import Any

from ..errors import WriteError
from ..files import locked, replace_atomically
from ..launch import launcher_path

TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
OTHER_EVENTS = (
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
)
EVENTS = TOOL_EVENTS + OTHER_EVENTS
TIMEOUT = 15


def hook_command(python: str | None = None, launcher: str | None = None) -> str:
    """The wired command: a shell guard, then the interpreter with -S on our launcher.

    If the interpreter or the launcher is gone (an uninstall, a moved venv) the guard
    exits 0 silently instead of failing every tool call.
    """
    py = shlex.quote(python or sys.executable)
    ln = shlex.quote(launcher or launcher_path())
    return f"[ -x {py} ] && [ -f {ln} ] || exit 0; exec {py} -S {ln} hook sensors"


def is_ours(handler: Any) -> bool:
    if not isinstance(handler, dict):
        return False
    cmd = handler.get("command")
    if not isinstance(cmd, str):
        return False
    cmd = cmd.strip()
    if not cmd.endswith("hook sensors"):
        return False
    return "_launch.py" in cmd or "ways" in cmd


def settings_path(project: str | None) -> str:
    if project:
        return os.path.join(os.path.abspath(project), ".claude", "settings.json")
    return os.path.join(os.path.expanduser("~"), ".claude", "settings.json")


def _indent_of(text: str) -> int | str:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            ws = line[: len(line) - len(stripped)]
            return "\t" if ws.startswith("\t") else len(ws)
    return 2


def wire(settings: dict[str, Any], command: str) -> dict[str, Any]:
    """Settings with our handler on every event, in place where one of ours already was."""
    out = dict(settings)
    hooks = out.get("hooks")
    hooks = dict(hooks) if isinstance(hooks, dict) else {}
    entry = {"type": "command", "command": command, "timeout": TIMEOUT}
    for event in EVENTS:
        groups = hooks.get(event)
        groups = list(groups) if isinstance(groups, list) else []
        found = False
        new_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                new_groups.append(group)
                continue
            handlers = []
            for h in group["hooks"]:
                if is_ours(h):
                    if found:
                        continue  # a duplicate of ours: keep one
                    found = True
                    h = {**h, **entry}
                handlers.append(h)
            if handlers or not group["hooks"]:
                new_groups.append({**group, "hooks": handlers})
        if not found:
            group: dict[str, Any] = {"matcher": "*"} if event in TOOL_EVENTS else {}
            group["hooks"] = [entry]
            new_groups.append(group)
        hooks[event] = new_groups
    out["hooks"] = hooks
    return out


def unwire(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings without our handlers, and without the containers that emptied because of it."""
    out = dict(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    hooks = dict(hooks)
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        new_groups = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                kept = [h for h in group["hooks"] if not is_ours(h)]
                if len(kept) != len(group["hooks"]) and not kept:
                    continue  # emptied by us
                if len(kept) != len(group["hooks"]):
                    group = {**group, "hooks": kept}
            new_groups.append(group)
        if groups and not new_groups:
            del hooks[event]
        else:
            hooks[event] = new_groups
    if settings.get("hooks") and not hooks:
        del out["hooks"]
    else:
        out["hooks"] = hooks
    return out


def read_settings(path: str) -> tuple[dict[str, Any], str | None]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        raise WriteError(f"cannot read {path}: {exc.strerror}") from None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise WriteError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); left untouched",
            hint="fix it by hand, then run `ways reconcile` again",
        ) from None
    if not isinstance(data, dict):
        raise WriteError(
            f"{path} does not hold a JSON object; left untouched",
            hint="fix it by hand, then run `ways reconcile` again",
        )
    return data, text


def atomic_write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    replace_atomically(path, text, fsync=True)  # settings.json: worth a flush to disk


def _compile_package() -> None:
    """Byte-compile the package so the hook never compiles on a tool call (an editable
    install, or PYTHONDONTWRITEBYTECODE, would otherwise leave it to every run)."""
    import compileall

    from ..roots import package_dir

    try:
        compileall.compile_dir(package_dir(), quiet=2, force=False)
    except OSError:
        pass  # a read-only install was compiled by pip already


def run(args) -> int:
    path = args.settings or settings_path(args.project)
    with locked(path):
        data, text = read_settings(path)
        new = unwire(data) if args.remove else wire(data, hook_command())
        if new == data:
            print(f"{path}: nothing to change")
            return 0
        indent = _indent_of(text) if text else 2
        new_text = json.dumps(new, indent=indent, ensure_ascii=False) + "\n"
        if args.dry_run:
            diff = difflib.unified_diff(
                (text or "").splitlines(True), new_text.splitlines(True), path, path + " (new)"
            )
            sys.stdout.writelines(diff)
            return 0
        try:
            atomic_write(path, new_text)
        except OSError as exc:
            raise WriteError(f"cannot write {path}: {exc.strerror}") from None
    if not args.remove:
        _compile_package()
    if args.remove:
        print(f"{path}: removed ways hook sensors")
    else:
        print(f"{path}: ways hook sensors wired on {len(EVENTS)} events")
    return 0
