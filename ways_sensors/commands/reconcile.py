"""`ways reconcile [--agent NAME|all] [--project DIR] [--remove] [--dry-run]`: wire the hook.

(`--managed [--root DIR]` writes the system-wide wiring instead: fleet/managed.py.)

What is wired where is the agent adapter's (agents/<name>/, default claude-code: one
handler on each of its fifteen events (wiring.EVENTS) in `~/.claude/settings.json`, or
`DIR/.claude/settings.json`; see agents/claude_code/wiring.py; Codex
`~/.codex/hooks.json`, Gemini CLI `~/.gemini/settings.json`, Cursor
`~/.cursor/hooks.json`, Copilot CLI `~/.copilot/hooks/ways-sensors.json`). This module
owns the command that is wired and the guarantees around the write, the same for every
agent. `--agent all` wires every registered agent whose configuration folder exists
(`~/.claude`, `~/.codex`, ...; with --project, the project's), one line each.

The command is `<python> -S <launcher> hook sensors`, plus `--agent NAME` for an agent
other than the default (and `--event NAME` where an adapter wires an event whose
payload names none). A handler is ours when its command ends that way and names
our launcher or `ways`; an older form of ours is replaced in place, so re-running
after an upgrade or a move of the environment repairs the path. Every other hook, key
and order is kept; a second run changes nothing; `--remove` deletes our handlers and
only what became empty through that (a hooks file of ways' own, an adapter's
OWN_FILE, is deleted once empty). Writes hold the file's lock (files.locked, in the
state root) and replace the file atomically, keeping its mode and indentation. An
adapter's NOTE (Codex: a new hook runs only once trusted in /hooks) is printed
after wiring.

The settings file is the user's, so what reconcile cannot edit faithfully it leaves
untouched and refuses in one line (exit 5): a file that is not valid JSON, is nested
past the parser's depth, or holds the same key twice in one object (the parser would
keep only the last; rewriting would silently drop the other); a file that is not a
regular file (a FIFO would block the read); a read-only file when a change is due (as
`ways settings set` refuses one); settings whose hooks are not in the shape the
adapter edits (its wire/unwire raise matcher_groups.ShapeError). A symlinked file (a
dotfiles manager's) is followed: its target is locked and replaced, the link stays.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shlex
import stat
import sys
from typing import TYPE_CHECKING, Any

from .. import agents
from ..agents import matcher_groups
from ..agents.wired import is_our_command
from ..dispatch.launch import launcher_path
from ..errors import UsageError, WaysError, WriteError
from ..state.files import locked, replace_atomically

if TYPE_CHECKING:
    import argparse


def hook_command(
    python: str | None = None, launcher: str | None = None, agent: str = agents.DEFAULT
) -> str:
    """The wired command: a shell guard, then the interpreter with -S on our launcher.

    If the interpreter or the launcher is gone (an uninstall, a moved venv) the guard
    exits 0 silently instead of failing every tool call.
    """
    py = shlex.quote(python or sys.executable)
    ln = shlex.quote(launcher or launcher_path())
    tail = "" if agent == agents.DEFAULT else " --agent " + shlex.quote(agent)
    return f"[ -x {py} ] && [ -f {ln} ] || exit 0; exec {py} -S {ln} hook sensors{tail}"


def _indent_of(text: str) -> int | str:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            ws = line[: len(line) - len(stripped)]
            return "\t" if ws.startswith("\t") else len(ws)
    return 2


def settings_target(path: str) -> str:
    """The file `path` names: a symlink (a dotfiles manager links settings.json into
    place) is followed to its final target, which is what is locked, read and replaced,
    so the link stays a link. A dangling link names the target it will create."""
    return os.path.realpath(path)


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's object_pairs_hook: an object, unless a key repeats (json keeps the last)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


class _Unkeepable(ValueError):
    """A value json would write back as something else: a number beyond a float's
    range (1e999 comes back as Infinity, which no JSON parser takes), or the NaN and
    Infinity literals json accepts and JSON does not have."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Unkeepable(text)
    return value


def _no_constant(text: str) -> float:
    raise _Unkeepable(text)


def _untouched(path: str, why: str) -> WriteError:
    return WriteError(
        f"{path} {why}; left untouched", hint="fix it by hand, then run `ways reconcile` again"
    )


def read_settings(path: str) -> tuple[dict[str, Any], str | None]:
    """The settings object at `path` (through a symlink) and its text; ({}, None) when
    there is no file. Refuses (WriteError) what a rewrite could not keep faithfully."""
    target = settings_target(path)
    try:
        # O_NONBLOCK: a FIFO planted there opens without a writer, and is refused below
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        raise WriteError(f"cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # before fdopen, which refuses a folder
        os.close(fd)
        raise _untouched(path, "is not a regular file")
    with os.fdopen(fd, "rb") as f:
        try:
            raw = f.read()
        except OSError as exc:
            raise WriteError(f"cannot read {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _untouched(path, "is not UTF-8 text") from None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(
            text, object_pairs_hook=_unique_keys, parse_float=_finite, parse_constant=_no_constant
        )
    except _DuplicateKey as exc:
        key = json.dumps(exc.key, ensure_ascii=True)[:80]
        raise _untouched(path, f"holds the key {key} twice in one object") from None
    except _Unkeepable as exc:
        number = exc.text[:40]
        raise _untouched(
            path, f"holds the number {number}, which a rewrite could not write back as it is"
        ) from None
    except RecursionError:
        raise _untouched(path, "is nested too deeply to parse") from None
    except json.JSONDecodeError as exc:
        raise _untouched(path, f"is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except ValueError:  # an integer of more digits than int() converts (4,300 by default)
        raise _untouched(path, "holds an integer too long to read back") from None
    if not isinstance(data, dict):
        raise _untouched(path, "does not hold a JSON object")
    return data, text


def shape_refused(path: str, exc: matcher_groups.ShapeError) -> WriteError:
    """The adapter found the settings' hooks in a shape it cannot edit faithfully."""
    return _untouched(path, str(exc))


def atomic_write(path: str, text: str) -> None:
    """Replace the settings file (a symlink's target; see settings_target) atomically,
    keeping its mode; a read-only one is refused, never rewritten."""
    target = settings_target(path)
    try:
        mode: int | None = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and (mode & 0o200 == 0 or not os.access(target, os.W_OK)):
        raise WriteError(
            f"{path} is read-only; left untouched",
            hint="make it writable, then run `ways reconcile` again",
        )
    os.makedirs(os.path.dirname(target), exist_ok=True)
    replace_atomically(target, text, fsync=True)  # settings.json: worth a flush to disk


def _compile_package() -> None:
    """Byte-compile the package so the hook never compiles on a tool call (an editable
    install, or PYTHONDONTWRITEBYTECODE, would otherwise leave it to every run)."""
    import compileall

    from ..roots import package_dir

    try:
        compileall.compile_dir(package_dir(), quiet=2, force=False)
    except OSError:
        pass  # a read-only install was compiled by pip already


def adapter_of(name: str) -> agents.Adapter:
    try:
        return agents.adapter(name)
    except KeyError:
        raise UsageError(f"no agent {name!r}", hint="one of " + ", ".join(agents.names())) from None


def run(args: argparse.Namespace) -> int:
    if getattr(args, "managed", False):  # the system-wide files: fleet/managed.py
        from ..fleet import managed

        lent = managed.Wiring(
            hook_command, is_our_command, read_settings, shape_refused, _indent_of
        )
        return managed.run(args, lent)
    if getattr(args, "root", None):
        raise UsageError("--root stages the system-wide files: use it with --managed")
    code = _wire(args)
    if code == 0 and not args.remove:
        print(enabled_summary(args.project))
    return code


def enabled_summary(project: str | None) -> str:
    """How many rules the hook will act on; with none, the one command that changes it
    (a wired hook with no enabled rule records nothing, by design, and says nothing)."""
    from ..config.layers import load

    cat = load(os.path.abspath(project) if project else None)
    on = [
        r.label
        for s in cat.sensors.values()
        if s.spec.enabled
        for r in s.rules.values()
        if r.spec.enabled
    ]
    if not on:
        return (
            "no rule is enabled, so nothing is recorded yet; turn on the shipped audit "
            "sensor with: ways settings set ways.sensors.audit.enabled true"
        )
    shown = ", ".join(on[:5]) + (f" and {len(on) - 5} more" if len(on) > 5 else "")
    return f"{len(on)} rule(s) enabled: {shown}"


def _wire(args: argparse.Namespace) -> int:
    name = getattr(args, "agent", None) or agents.DEFAULT
    if name != "all":
        return _reconcile(name, adapter_of(name), args, args.settings)
    if args.settings:
        raise UsageError("--settings names one file: use it with one --agent")
    worst = 0
    for each in agents.names():
        adapter = adapter_of(each)
        home = _config_home(adapter, args.project)
        if not os.path.isdir(home):
            print(f"{each}: skipped, no {home}")
            continue
        try:
            worst = max(worst, _reconcile(each, adapter, args, None))
        except WaysError as exc:  # one broken file: the other agents are still wired
            print(f"ways: {exc.message}", file=sys.stderr)
            worst = max(worst, exc.code)
        except OSError as exc:  # a folder or file in the way: this agent only
            print(f"ways: {each}: {exc.strerror or type(exc).__name__}; not wired", file=sys.stderr)
            worst = max(worst, WriteError.code)
    return worst


def _config_home(adapter: agents.Adapter, project: str | None) -> str:
    """The agent's configuration folder: its adapter's `config_home`, else the folder
    of the file it wires."""
    home = getattr(adapter, "config_home", None)
    return str(home(project)) if home else os.path.dirname(adapter.settings_path(project))


def _reconcile(
    name: str, adapter: agents.Adapter, args: argparse.Namespace, settings: str | None
) -> int:
    def ours(command: str) -> bool:
        return is_our_command(command, name)

    path = settings or adapter.settings_path(args.project)
    own_file = bool(getattr(adapter, "OWN_FILE", False))
    with locked(settings_target(path)):
        data, text = read_settings(path)
        try:
            if args.remove:
                new = adapter.unwire(data, ours)
            else:
                new = adapter.wire(data, hook_command(agent=name), ours)
        except matcher_groups.ShapeError as exc:
            raise shape_refused(path, exc) from None
        if new == data:
            print(f"{path}: nothing to change")
            return 0
        delete = own_file and args.remove and not new
        indent = _indent_of(text) if text else 2
        new_text = "" if delete else json.dumps(new, indent=indent, ensure_ascii=False) + "\n"
        if args.dry_run:
            diff = difflib.unified_diff(
                (text or "").splitlines(True), new_text.splitlines(True), path, path + " (new)"
            )
            sys.stdout.writelines(diff)
            return 0
        try:
            if delete:
                os.unlink(path)
            else:
                atomic_write(path, new_text)
        except OSError as exc:
            raise WriteError(f"cannot write {path}: {exc.strerror}") from None
    if not args.remove:
        _compile_package()
    if args.remove:
        print(
            f"{path}: removed ways hook sensors" + (" (and the file, ours alone)" if delete else "")
        )
    else:
        print(f"{path}: ways hook sensors wired on {len(adapter.WIRED_EVENTS)} events")
        note = getattr(adapter, "NOTE", None)
        if note:
            print(f"  note: {note}")
    return 0
