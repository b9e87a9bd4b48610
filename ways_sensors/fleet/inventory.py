"""What a session's first record tells a central store about the install behind it, so
it sees drift across a fleet:

    "inventory": {"ways_version": "...", "agents_wired": ["claude-code", ...],
                  "sensors_sha256": "<64 hex>", "hooks_sha256": {"<agent>": "<64 hex>"}}

* `agents_wired`: the agents whose user-level or managed settings hold ways' hook.
* `sensors_sha256`: one hash over every sensor file and config.yaml the layers read
  (shipped, managed, user, and the project's), each as its path and the hash of its
  bytes, in the order the layers apply: any edit, addition or removal changes it.
* `hooks_sha256`: per wired agent, a hash of the `hooks` of the settings files that
  wire it (canonical JSON): another tool's hook added beside ours changes it too.

Only the record with `seq` 1 carries it (journal.py); computed once per dispatcher.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from .. import __version__, agents, roots
from .places import PLACES, path_of, read_wiring


def _file_hash(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _sensor_files(project: str) -> list[str]:
    folders = [roots.shipped_sensor_dir()]
    folders += [m + "/sensors" for m in roots.managed_roots()]
    folders += [roots.user_sensor_dir(), roots.project_sensor_dir(project)]
    out = [p for folder in folders for p in roots.sensor_files(folder)]
    out += [m + "/config.yaml" for m in roots.managed_roots()] + [roots.config_file()]
    return out


def sensors_hash(project: str) -> str:
    h = hashlib.sha256()
    for path in _sensor_files(project):
        digest = _file_hash(path)
        if digest:
            h.update(f"{path}\0{digest}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _hooks(path: str) -> Any:
    if not os.path.exists(path):
        return None
    return read_wiring(path).get("hooks")


def hooks_hashes() -> dict[str, str]:
    """Per agent wired (user-level or managed), the hash of its wiring files' hooks."""
    from .policy import ours_in

    out = {}
    for name in PLACES:
        files = [agents.adapter(name).settings_path(None), path_of(name)]
        found = [(p, h) for p in files if (h := _hooks(p)) is not None]
        if any(ours_in(name, {"hooks": h}) for _, h in found):
            text = json.dumps(found, sort_keys=True, separators=(",", ":"))
            out[name] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return out


def inventory(project: str | None = None) -> dict[str, Any]:
    hooks = hooks_hashes()
    return {
        "ways_version": __version__,
        "agents_wired": sorted(hooks),
        "sensors_sha256": sensors_hash(project or os.getcwd()),
        "hooks_sha256": hooks,
    }
