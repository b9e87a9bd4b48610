"""`ways reconcile --managed [--agent NAME|all] [--root DIR] [--remove] [--dry-run]`.

Writes each agent's system-wide wiring (places.py): the same handlers the user-level
`reconcile` writes (the agent's adapter wires and unwires them), in the file the agent
reads as administrator policy. New files and folders are 0644 and 0755 (owned by
whoever runs it: root, for a live system); a merged file keeps its mode. A second run
changes nothing. `--remove` takes our handlers out and puts back the file as it was
before the first wiring, byte for byte (originals.py): deleted if ways created it,
with the folders it created; when the administrator changed the file since, it is
rewritten without our handlers instead, and says so.

`--root DIR` stages the same tree under DIR (an MDM package, a machine image), no root
needed. The hook command names the interpreter and launcher this `ways` runs from, so
run it from the system-wide install (docs/fleet.md: a venv under /opt/agent-ways).
With `--agent all` every agent is wired, installed or not (a machine image gets the
agent later); one file that cannot be edited leaves the others wired (exit 5).
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import agents
from ..agents import matcher_groups
from ..errors import UsageError, WaysError, WriteError
from ..state.files import locked, replace_atomically
from . import originals
from .places import PLACES, Place, system_root

if TYPE_CHECKING:
    import argparse

FILE_MODE = 0o644
DIR_MODE = 0o755


@dataclass(frozen=True)
class Wiring:
    """What the user-level reconcile (commands/reconcile.py) lends: its hook command,
    its test of which commands are ours, its faithful settings reader and its refusals.
    Passed in, not imported: that module hands `--managed` to this one."""

    hook_command: Callable[..., str]
    is_our_command: Callable[[str, str], bool]
    read_settings: Callable[[str], tuple[dict[str, Any], str | None]]
    shape_refused: Callable[[str, matcher_groups.ShapeError], WriteError]
    indent_of: Callable[[str], int | str]


def run(args: argparse.Namespace, reconcile: Wiring) -> int:
    if args.project or args.settings:
        raise UsageError("--managed writes the system files: leave out --project and --settings")
    name = getattr(args, "agent", None) or agents.DEFAULT
    names = list(PLACES) if name == "all" else [name]
    for each in names:
        if each not in PLACES:
            raise UsageError(f"no managed wiring for {each!r}", hint="one of " + ", ".join(PLACES))
    root = system_root(args.root)
    worst = 0
    for each in names:
        try:
            print(_one(reconcile, PLACES[each], root, args.remove, args.dry_run))
        except WaysError as exc:
            if len(names) == 1:
                raise
            print(f"ways: {exc.message}", file=sys.stderr)
            worst = max(worst, exc.code)
    return worst


def _one(reconcile: Wiring, place: Place, root: str, remove: bool, dry_run: bool) -> str:
    path = os.path.join(root, place.path)
    adapter = agents.adapter(place.agent)
    command = reconcile.hook_command(agent=place.agent)

    def ours(cmd: str) -> bool:
        return reconcile.is_our_command(cmd, place.agent)

    try:
        with locked(path):
            data, text = reconcile.read_settings(path)
            try:
                if remove:

                    def cycle(d: Any) -> Any:  # what wiring, then removing, leaves of d
                        return adapter.unwire(adapter.wire(d, command, ours), ours)

                    new = adapter.unwire(data, ours)
                    dump = functools.partial(_dump, reconcile.indent_of)
                    return _remove(place, root, path, (data, text, new), cycle, dump, dry_run)
                new = adapter.wire(data, command, ours)
            except matcher_groups.ShapeError as exc:
                raise reconcile.shape_refused(path, exc) from None
            dump = functools.partial(_dump, reconcile.indent_of)
            return _wire(place, root, path, (data, text, new), dump, dry_run)
    except OSError as exc:
        raise WriteError(
            f"cannot write {path}: {exc.strerror or type(exc).__name__}",
            hint="run it as root, or stage the files with --root DIR",
        ) from None


def _dump(indent_of: Callable[[str], int | str], new: dict[str, Any], text: str | None) -> str:
    indent = indent_of(text) if text else 2
    return json.dumps(new, indent=indent, ensure_ascii=False) + "\n"


def _diff(path: str, old: str | None, new: str) -> str:
    lines = difflib.unified_diff(
        (old or "").splitlines(True), new.splitlines(True), path, path + " (new)"
    )
    return "".join(lines).rstrip("\n")


Change = tuple[dict[str, Any], "str | None", dict[str, Any]]  # the file's data, text, new data
Dump = Callable[[dict[str, Any], "str | None"], str]


def _wire(place: Place, root: str, path: str, change: Change, dump: Dump, dry: bool) -> str:
    data, text, new = change
    if new == data:
        return f"{path}: nothing to change"
    new_text = dump(new, text)
    if dry:
        return _diff(path, text, new_text)
    if originals.load(root, place.path) is None:
        mode = stat.S_IMODE(os.stat(path).st_mode) if text is not None else 0
        raw = b""
        if text is not None:
            with open(path, "rb") as f:
                raw = f.read()
        made = _missing_dirs(root, os.path.dirname(path))
        originals.save(root, originals.Original(place.path, text is not None, mode, made, raw))
    folder = os.path.dirname(path)
    for rel in reversed(_missing_dirs(root, folder)):
        os.mkdir(os.path.join(root, rel))
        os.chmod(os.path.join(root, rel), DIR_MODE)  # not the umask's
    replace_atomically(path, new_text, new_mode=FILE_MODE, fsync=True)
    events = len(agents.adapter(place.agent).WIRED_EVENTS)
    return f"{path}: ways hook sensors wired on {events} events (managed)"


def _missing_dirs(root: str, folder: str) -> tuple[str, ...]:
    """The folders from `folder` up that do not exist yet, deepest first, under `root`."""
    out = []
    while not os.path.exists(folder) and len(folder) > len(root):
        out.append(os.path.relpath(folder, root))
        folder = os.path.dirname(folder)
    return tuple(out)


def _remove(
    place: Place,
    root: str,
    path: str,
    change: Change,
    cycle: Callable[[Any], Any],
    dump: Dump,
    dry: bool,
) -> str:
    data, text, new = change
    if new == data:
        return f"{path}: nothing to change"
    saved = originals.load(root, place.path)
    restore: bytes | None = None
    if saved is not None and saved.existed and _parsed(saved.raw, cycle) == new:
        restore = saved.raw
    delete = (
        restore is None
        and new == cycle({})
        and (place.own_file or (saved is not None and not saved.existed))
    )
    if dry:
        after = "" if delete else (restore or b"").decode("utf-8") or dump(new, text)
        return _diff(path, text, after)
    if restore is not None:
        assert saved is not None
        replace_atomically(path, restore, fsync=True)
        os.chmod(path, saved.mode)
        said = "restored byte for byte"
    elif delete:
        os.unlink(path)
        for rel in saved.made_dirs if saved else ():
            try:
                os.rmdir(os.path.join(root, rel))
            except OSError:
                pass  # something else is in it now (another agent's file): it stays
        said = "deleted (ways had created it)"
    else:
        replace_atomically(path, dump(new, text), fsync=True)
        said = "our handlers removed (the file changed since it was wired: not restored as it was)"
    originals.forget(root, place.path)
    return f"{path}: {said}"


def _parsed(raw: bytes, cycle: Callable[[Any], Any]) -> Any:
    """The kept original as the unwired file would hold it (wiring adds a flat file's
    `version`, which removing keeps), or None when it cannot be read as an object."""
    try:
        data = json.loads(raw.decode("utf-8")) if raw.strip() else {}
        return cycle(data) if isinstance(data, dict) else None
    except (ValueError, matcher_groups.ShapeError):
        return None
