"""`ways sensors copy|rename|delete`: the named-file flow (user layer, or `--project DIR`).

Any sensor can be copied to a new name: the copy holds the merged sensor with every
rule `enabled: false`, each waiting for its preview (`ways sensors test`). User and
project sensors can be renamed and deleted; shipped ones cannot (copy them instead).
"""

from __future__ import annotations

import os

from .. import previews, yamlwrite
from ..errors import InvalidError, UsageError, WriteError
from ..layers import load
from ..settings import layer_file, plain
from ..spec import NAME_RE


def _target(args) -> tuple[str, str | None]:
    project = os.path.abspath(args.project) if args.project else None
    return ("project" if project else "user"), project


def _name(name: str) -> str:
    if not NAME_RE.match(name):
        raise UsageError(f"{name!r} is not a sensor name: use lowercase letters, digits, - and _")
    return name


def copy(args) -> int:
    layer, project = _target(args)
    src, dst = _name(args.source), _name(args.dest)
    cat = load(project, with_project=True if project else None)
    sensor = cat.sensors.get(src)
    if sensor is None:
        raise UsageError(f"no sensor {src!r}", hint="`ways sensors list` shows them")
    if dst in cat.sensors or os.path.exists(layer_file(layer, dst, project)):
        raise InvalidError(f"a sensor named {dst!r} exists already", hint="pick another name")
    data = plain(sensor.raw)
    data["enabled"] = True
    for rule in data.get("rules", {}).values():
        rule["enabled"] = False
    path = layer_file(layer, dst, project)
    from ruamel.yaml.comments import CommentedMap

    doc = CommentedMap(data)
    doc.yaml_set_start_comment(
        f"copied from {src} ({sensor.layer}: {sensor.path}); every "
        "rule starts disabled until `ways sensors test` shows it"
    )
    yamlwrite.write_document(path, doc)
    for rule in data.get("rules", {}):
        previews.created(f"{dst}/{rule}")
    print(
        f"copied {src} to {path}; its rules are disabled until previewed: "
        + ", ".join(f"ways sensors test {dst}/{r}" for r in data.get("rules", {}))
    )
    return 0


def _own_file(name: str, layer: str, project: str | None) -> str:
    path = layer_file(layer, name, project)
    if not os.path.exists(path):
        cat = load(project)
        s = cat.sensors.get(name)
        if s and all(src.layer == "shipped" for src in s.sources):
            raise InvalidError(
                f"{name} is a shipped sensor: it can be copied, not renamed or deleted",
                hint=f"ways sensors copy {name} NEW-NAME",
            )
        raise UsageError(f"no {layer} sensor {name!r} ({path})")
    return path


def rename(args) -> int:
    layer, project = _target(args)
    src, dst = _name(args.source), _name(args.dest)
    path = _own_file(src, layer, project)
    cat = load(project)
    sources = cat.sensors[src].sources if src in cat.sensors else []
    if any(s.layer == "shipped" for s in sources):
        raise InvalidError(
            f"{src} overrides a shipped sensor: renaming it would not rename the shipped one",
            hint=f"ways sensors copy {src} {dst}",
        )
    new = layer_file(layer, dst, project)
    if dst in cat.sensors or os.path.exists(new):
        raise InvalidError(f"a sensor named {dst!r} exists already", hint="pick another name")
    try:
        os.rename(path, new)
    except OSError as exc:
        raise WriteError(f"cannot rename {path}: {exc.strerror}") from None
    previews.renamed(src, dst)
    print(f"renamed {path} to {new}")
    return 0


def delete(args) -> int:
    layer, project = _target(args)
    name = _name(args.name)
    path = _own_file(name, layer, project)
    try:
        os.unlink(path)
    except OSError as exc:
        raise WriteError(f"cannot delete {path}: {exc.strerror}") from None
    print(f"deleted {path}")
    return 0
