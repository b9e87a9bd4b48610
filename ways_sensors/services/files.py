"""Sensor files by name: copy, rename, delete, at the user layer or a project's.

Any sensor can be copied to a new name: the copy holds the merged sensor with every
rule `enabled: false`, each waiting for its preview, and passes the preview gate
(previews.refuse_enabling) like every other writer. A rename changes no flag and moves
the rules' gate entries with them. User and project
sensors can be renamed and deleted; shipped and managed ones cannot (copy them instead),
and nothing can be copied over, renamed to or from, or deleted of a sensor a managed
file locks (config/locks.py: the refusal names that file). Each
change holds the lock of every file it touches (files.locked: kept in the state root,
so the sensor folder holds sensor files only) and checks its preconditions under it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from ..config import locks, yamlwrite
from ..config.layers import load
from ..config.settings import layer_file, plain
from ..config.spec import NAME_RE
from ..errors import InvalidError, UsageError, WriteError
from ..state import previews
from ..state.files import lock_path, locked
from ..state.layout import rule_label
from . import project_folder


@dataclass(frozen=True)
class Copied:
    source: str
    source_layer: str
    source_path: str
    name: str
    path: str
    rules: tuple[str, ...]  # each written disabled, waiting for `ways sensors test`

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "rules": list(self.rules)}


@dataclass(frozen=True)
class Renamed:
    old: str
    new: str
    old_path: str
    path: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Deleted:
    name: str
    path: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _layer(project: str | None) -> tuple[str, str | None]:
    project = project_folder(project)
    return ("project" if project else "user"), project


def _name(name: str) -> str:
    if not NAME_RE.match(name):
        raise UsageError(f"{name!r} is not a sensor name: use lowercase letters, digits, - and _")
    return name


def _taken(name: str) -> InvalidError:
    return InvalidError(f"a sensor named {name!r} exists already", hint="pick another name")


@contextlib.contextmanager
def _locked_all(*paths: str) -> Iterator[None]:
    """Hold the locks of several files, taken in one global order (no deadlock between
    a rename a -> b and a rename b -> a)."""
    with contextlib.ExitStack() as stack:
        for path in sorted(set(paths), key=lock_path):
            stack.enter_context(locked(path))
        yield


def copy(source: str, dest: str, project: str | None = None) -> Copied:
    layer, project = _layer(project)
    src, dst = _name(source), _name(dest)
    cat = load(project, with_project=True if project else None)
    sensor = cat.sensors.get(src)
    if sensor is None:
        raise UsageError(f"no sensor {src!r}", hint="`ways sensors list` shows them")
    path = layer_file(layer, dst, project)
    locks.refuse(cat.locks, dst)  # a copy over a locked sensor would shadow it
    if dst in cat.sensors or os.path.exists(path):
        raise _taken(dst)
    data = plain(sensor.raw)
    data["enabled"] = True
    for rule in data.get("rules", {}).values():
        rule["enabled"] = False
    rules = tuple(data.get("rules", {}))
    previews.refuse_enabling(dst, None, data, new=rules)
    from ruamel.yaml.comments import CommentedMap

    doc = CommentedMap(data)
    doc.yaml_set_start_comment(
        f"copied from {src} ({sensor.layer}: {sensor.path}); every "
        "rule starts disabled until `ways sensors test` shows it"
    )
    for rule in rules:  # gate first: a failed write leaves a gate, never an ungated rule
        previews.created(rule_label(dst, rule))
    yamlwrite.write_document(path, doc)
    return Copied(src, sensor.layer, sensor.path, dst, path, rules)


def _own_file(name: str, layer: str, project: str | None) -> str:
    path = layer_file(layer, name, project)
    cat = load(project)
    locks.refuse(cat.locks, name)
    if not os.path.exists(path):
        s = cat.sensors.get(name)
        if s and all(src.layer == "managed" for src in s.sources[-1:]):
            raise InvalidError(
                f"{name} is a managed sensor ({s.path}): it can be copied, not renamed or deleted",
                hint=f"ways sensors copy {name} NEW-NAME",
            )
        if s and all(src.layer == "shipped" for src in s.sources):
            raise InvalidError(
                f"{name} is a shipped sensor: it can be copied, not renamed or deleted",
                hint=f"ways sensors copy {name} NEW-NAME",
            )
        raise UsageError(f"no {layer} sensor {name!r} ({path})")
    return path


def rename(source: str, dest: str, project: str | None = None) -> Renamed:
    layer, project = _layer(project)
    src, dst = _name(source), _name(dest)
    path = _own_file(src, layer, project)
    cat = load(project)
    sources = cat.sensors[src].sources if src in cat.sensors else []
    if any(s.layer == "shipped" for s in sources):
        raise InvalidError(
            f"{src} overrides a shipped sensor: renaming it would not rename the shipped one",
            hint=f"ways sensors copy {src} {dst}",
        )
    new = layer_file(layer, dst, project)
    locks.refuse(cat.locks, dst)
    if dst in cat.sensors:
        raise _taken(dst)
    with _locked_all(path, new):
        if os.path.exists(new):
            raise _taken(dst)
        try:
            os.rename(path, new)
        except FileNotFoundError:
            raise UsageError(f"no {layer} sensor {src!r} ({path})") from None
        except OSError as exc:
            raise WriteError(f"cannot rename {path}: {exc.strerror}") from None
    previews.renamed(src, dst)
    return Renamed(src, dst, path, new)


def delete(name: str, project: str | None = None) -> Deleted:
    layer, project = _layer(project)
    name = _name(name)
    path = _own_file(name, layer, project)
    with locked(path):
        try:
            os.unlink(path)
        except FileNotFoundError:
            raise UsageError(f"no {layer} sensor {name!r} ({path})") from None
        except OSError as exc:
            raise WriteError(f"cannot delete {path}: {exc.strerror}") from None
    return Deleted(name, path)
