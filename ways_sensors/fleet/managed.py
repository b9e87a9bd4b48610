"""`ways reconcile --managed [--agent NAME|all] [--root DIR] [--remove] [--dry-run]`.

Writes each agent's system-wide wiring (places.py): the same handlers the user-level
`reconcile` writes (the agent's adapter wires and unwires them), in the file the agent
reads as administrator policy. New files and folders are 0644 and 0755 (owned by
whoever runs it: root, for a live system); a merged file keeps its mode. A second run
changes nothing. `--remove` takes our handlers out and puts back the file as it was
before the first wiring, byte for byte (originals.py): deleted if ways created it,
with the folders it created; when the administrator changed the file since, it is
rewritten without our handlers instead, and says so.

Some agents also need a switch in the same file (places.py: Gemini CLI's hooks system,
`hooksConfig.enabled`, and `tools.enableHooks` for older builds): wiring sets it, and
`--remove` puts back what the file had there before (or takes the key out, with any
object wiring created for it). Codex's managed hooks are TOML, a block of ours at the
end of the administrator's requirements.toml (requirements.py).

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
from . import originals, requirements
from .places import PLACES, Place, Switch, system_root

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
    if place.path.endswith(".toml"):
        return _one_toml(place, root, command, remove, dry_run)
    switches = place.switches

    def ours(cmd: str) -> bool:
        return reconcile.is_our_command(cmd, place.agent)

    try:
        with locked(path):
            data, text = reconcile.read_settings(path)
            try:
                if remove:
                    before = _before(root, place)

                    def cycle(d: Any) -> Any:  # what wiring, then removing, leaves of d
                        wired = _switch_on(adapter.wire(d, command, ours), switches)
                        return _switch_back(adapter.unwire(wired, ours), switches, d)

                    new = _switch_back(adapter.unwire(data, ours), switches, before)
                    dump = functools.partial(_dump, reconcile.indent_of)
                    return _remove(place, root, path, (data, text, new), cycle, dump, dry_run)
                new = _switch_on(adapter.wire(data, command, ours), switches)
            except matcher_groups.ShapeError as exc:
                raise reconcile.shape_refused(path, exc) from None
            dump = functools.partial(_dump, reconcile.indent_of)
            return _wire(place, root, path, (data, text, new), dump, dry_run)
    except OSError as exc:
        raise WriteError(
            f"cannot write {path}: {exc.strerror or type(exc).__name__}",
            hint="run it as root, or stage the files with --root DIR",
        ) from None


def _switch_on(data: dict[str, Any], switches: tuple[Switch, ...]) -> dict[str, Any]:
    """`data` with each switch's key set to its value (the objects on its way made)."""
    out: dict[str, Any] = json.loads(json.dumps(data))
    for keys, value in switches:
        at = out
        for k in keys[:-1]:
            if not isinstance(at.get(k), dict):
                at[k] = {}
            at = at[k]
        at[keys[-1]] = value
    return out


def _switch_back(
    data: dict[str, Any], switches: tuple[Switch, ...], before: dict[str, Any] | None
) -> dict[str, Any]:
    """`data` with each switch's key as `before` (the file before the first wiring) had
    it: its value, or no key (and no object left empty that `before` did not have).
    With `before` unknown (None), the keys stay: they may be the administrator's."""
    if before is None:
        return data
    out: dict[str, Any] = json.loads(json.dumps(data))
    for keys, _ in switches:
        had: Any = before
        for k in keys:
            had = had.get(k, _ABSENT) if isinstance(had, dict) else _ABSENT
        chain = [out]
        for k in keys[:-1]:
            nxt = chain[-1].get(k)
            if not isinstance(nxt, dict):
                break
            chain.append(nxt)
        else:
            if had is not _ABSENT:
                chain[-1][keys[-1]] = had
                continue
            chain[-1].pop(keys[-1], None)
            for depth in range(len(keys) - 1, 0, -1):  # the objects wiring made, now empty
                prefix, parent = keys[:depth], chain[depth - 1]
                if chain[depth] or _has(before, prefix):
                    break
                parent.pop(prefix[-1], None)
    return out


_ABSENT = object()


def _has(data: Any, keys: tuple[str, ...]) -> bool:
    for k in keys:
        if not isinstance(data, dict) or k not in data:
            return False
        data = data[k]
    return True


def _before(root: str, place: Place) -> dict[str, Any] | None:
    """The file as it was before the first wiring, parsed; {} when it did not exist;
    None when nothing was kept or it cannot be read as an object."""
    saved = originals.load(root, place.path)
    if saved is None:
        return None
    try:
        data = json.loads(saved.raw.decode("utf-8")) if saved.raw.strip() else {}
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _one_toml(place: Place, root: str, command: str, remove: bool, dry: bool) -> str:
    """Codex's requirements.toml: our block at its end (requirements.py)."""
    path = os.path.join(root, place.path)
    try:
        with locked(path):
            try:
                with open(path, "rb") as f:
                    raw: bytes | None = f.read()
            except FileNotFoundError:
                raw = None
            text = None if raw is None else raw.decode("utf-8")
            try:
                new = requirements.strip(text or "") if remove else requirements.wire(text, command)
            except requirements.Unfit as exc:
                raise WriteError(f"{path} {exc}; left untouched") from None
            if new == (text or "") and (text is not None or remove):
                return f"{path}: nothing to change"
            if dry:
                return _diff(path, text, new)
            if remove:
                return _remove_toml(place, root, path, new)
            _keep_original(root, place, path, raw)
            _make_dirs(root, os.path.dirname(path))
            replace_atomically(path, new, new_mode=FILE_MODE, fsync=True)
            events = len(agents.adapter(place.agent).WIRED_EVENTS)
            return f"{path}: ways hook sensors wired on {events} events (managed)"
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8"
        raise WriteError(
            f"cannot write {path}: {why or type(exc).__name__}",
            hint="run it as root, or stage the files with --root DIR",
        ) from None


def _remove_toml(place: Place, root: str, path: str, new: str) -> str:
    saved = originals.load(root, place.path)
    if saved is not None and saved.existed and new == _as_wired(saved.raw):
        replace_atomically(path, saved.raw, fsync=True)
        os.chmod(path, saved.mode)
        said = "restored byte for byte"
    elif saved is not None and not saved.existed and not new.strip():
        os.unlink(path)
        _remove_dirs(root, saved.made_dirs)
        said = "deleted (ways had created it)"
    else:
        replace_atomically(path, new, fsync=True)
        said = "our handlers removed (the file changed since it was wired: not restored as it was)"
    originals.forget(root, place.path)
    return f"{path}: {said}"


def _as_wired(raw: bytes) -> str | None:
    """The original text as wiring, then removing, leaves it (a last newline added)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text + "\n" if text and not text.endswith("\n") else text


def _keep_original(root: str, place: Place, path: str, raw: bytes | None) -> None:
    """The file before the first wiring (originals.py), once."""
    if originals.load(root, place.path) is None:
        mode = stat.S_IMODE(os.stat(path).st_mode) if raw is not None else 0
        made = _missing_dirs(root, os.path.dirname(path))
        originals.save(
            root, originals.Original(place.path, raw is not None, mode, made, raw or b"")
        )


def _make_dirs(root: str, folder: str) -> None:
    for rel in reversed(_missing_dirs(root, folder)):
        os.mkdir(os.path.join(root, rel))
        os.chmod(os.path.join(root, rel), DIR_MODE)  # not the umask's


def _remove_dirs(root: str, made: tuple[str, ...]) -> None:
    for rel in made:
        try:
            os.rmdir(os.path.join(root, rel))
        except OSError:
            pass  # something else is in it now (another agent's file): it stays


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
    raw = None
    if text is not None:
        with open(path, "rb") as f:
            raw = f.read()
    _keep_original(root, place, path, raw)
    _make_dirs(root, os.path.dirname(path))
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
        _remove_dirs(root, saved.made_dirs if saved else ())
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
