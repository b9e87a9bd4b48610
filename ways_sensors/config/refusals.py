"""Refused sensor files: loud, never a silent switch-off.

A sensor file that breaks the spec is refused whole (layers.py) and its rules record
nothing. Every index build (indexbuild.build: the hook's, in its forked child, or the
dispatcher's or a command's, whenever a sensor file changed) hands its catalog here:
each refusal not already noted for the same file contents is logged once to events.log,
content-free (`sensor.refused`: file, line, layer, sensor, rule; never the reason, which
can quote the file), and the whole list replaces `<state>/refused.json` (0600, through
secure.py), which the Prometheus textfile reads for its `refused_files` gauge:

    {"project": "<project of the build>",
     "files": [{"file", "line", "layer", "sensor", "rule", "enabled", "stamp"}]}

`stamp` is the file's size and mtime (ns), so a file edited but still refused is logged
again, one still refused after another file changed is not. `enabled` says whether
the sensor would be on if the file were accepted: its own top-level `enabled` when the
file parses, else what the layers below give the sensor (a new sensor: on, the spec's
default). `ways status` reports the refusals of its own fresh load (services/status.py)
and exits NOT_RECORDING while an enabled one is refused.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # metrics.py reads refused.json without loading the layers
    from .layers import Catalog

FILE = "refused.json"
MAX_SHOWN = 50  # refusals kept in refused.json (a folder of broken files stays bounded)


@dataclass(frozen=True)
class Refusal:
    file: str
    line: int
    layer: str | None
    sensor: str | None
    rule: str | None
    enabled: bool  # would be on if accepted

    def as_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "layer": self.layer,
            "sensor": self.sensor,
            "rule": self.rule,
            "enabled": self.enabled,
        }


def of(cat: Catalog) -> list[Refusal]:
    """Every sensor file the catalog refused for an error (the config file's own
    problems included: a broken config.yaml drops project sensors and settings)."""
    out = []
    for p in cat.errors:
        out.append(Refusal(p.path, p.line, p.layer, p.sensor, p.rule, _enabled(cat, p.path)))
    return out


def _enabled(cat: Catalog, path: str) -> bool:
    from .layers import stem
    from .yamlread import YamlError, read_yaml

    below = cat.sensors.get(stem(path))
    default = below.spec.enabled if below is not None else True
    try:
        raw, _ = read_yaml(path)
    except (YamlError, OSError, ValueError):
        return default
    value = raw.get("enabled") if isinstance(raw, dict) else None
    return value if isinstance(value, bool) else default


def _stamp(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_size}:{st.st_mtime_ns}"


def path(layout: Any) -> str:
    """`<state>/refused.json` (SIGKILL of a writer: the previous list, whole)."""
    return str(layout.root) + "/" + FILE


def read(layout: Any = None) -> list[dict[str, Any]]:
    """The refusals the last index build noted ([] when none or unreadable)."""
    from ..state.layout import Layout, read_state

    data = read_state(path(layout or Layout()))
    files = data.get("files") if isinstance(data, dict) else None
    return [f for f in files if isinstance(f, dict)] if isinstance(files, list) else []


def note(cat: Catalog, layout: Any = None) -> None:
    """Log each refusal not noted before for the same file contents; keep the list.
    Never raises: a build must not fail for its bookkeeping."""
    try:
        _note(cat, layout)
    except Exception as exc:
        from ..state import events

        events.log("sensor.refusals_unsaved", error=type(exc).__name__)


def _note(cat: Catalog, layout: Any) -> None:
    from ..state import events, secure
    from ..state.layout import Layout

    layout = layout or Layout()
    before = {(f.get("file"), f.get("stamp"), f.get("line")) for f in read(layout)}
    now = []
    for r in of(cat)[:MAX_SHOWN]:
        entry = {**r.as_json(), "stamp": _stamp(r.file)}
        now.append(entry)
        if (r.file, entry["stamp"], r.line) not in before:
            events.log(
                "sensor.refused",
                file=r.file,
                line=r.line,
                layer=r.layer,
                sensor=r.sensor,
                rule=r.rule,
                enabled=r.enabled,
            )
    if not now and not before:
        return  # nothing refused, nothing to clear: write nothing
    where = path(layout)
    secure.ensure_private_dir(layout.root, layout.root)
    data = json.dumps({"project": cat.project, "files": now}, sort_keys=True)
    secure.replace_private(where, data.encode("utf-8", "surrogateescape"), layout.root)
