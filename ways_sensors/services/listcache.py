"""`ways settings list`, kept: the last listing, reused until a file it came from changes.

Resolving every key loads every layer (the YAML parser, the spec's types, the targets:
bench/RESULTS.md, Everyday commands) and the listing changes only when a sensor file, a
sensor folder or config.yaml does. So the listing is kept in the cache root under the
rule index's key (index.compute_key: the version, the project, and the path, size and
modification time of every sensor folder, sensor file and config.yaml), and a run whose
key matches prints it without loading anything else:

    <cache>/settings/<project tail>-<fnv1a32 of the project>.json   (0600, folders 0700)
        {"key": "<the index key>", "rows": [{"key", "value", "layer", "default",
                                              "file"}, ...]}

Written by `ways settings list` after a full resolution, through secure.py (a fresh
O_EXCL temporary file renamed over the old one; a link or another user's file at the
path is refused, never followed). A listing that cannot be read, does not parse or
names another key is resolved again; one that cannot be written costs only the next
run's speed. Standard library only, so a hit imports nothing heavy.
"""

from __future__ import annotations

import json

from .. import index, roots
from ..roots import posix
from ..state import secure

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

    Row = dict[str, Any]  # services.settings.Setting.as_json()


def listing(project: str | None) -> list[Row]:
    """Every key's row for `project` (None: the hook's project): the kept listing when
    its key is current, else resolved (services/settings.py) and kept."""
    from . import project_folder

    folder = project_folder(project) or index.project_dir()
    rows = read(folder)
    if rows is None:
        from .settings import list_settings

        key = index.compute_key(folder)
        rows = [s.as_json() for s in list_settings(folder)]
        write(folder, key, rows)
    return rows


def path_for(project: str) -> str:
    name = index.index_path(project).rpartition("/")[2].rsplit(".", 1)[0]
    return roots.cache_root() + "/settings/" + name + ".json"


def read(project: str) -> list[Row] | None:
    """The kept listing for `project`, when its key is the current one."""
    path = path_for(project)
    try:
        fd = secure.open_private(path, posix.O_RDONLY, roots.cache_root())
    except OSError:
        return None
    try:
        with open(fd, "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("key") != index.compute_key(project):
        return None
    rows = data.get("rows")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        return None
    return rows


def write(project: str, key: str, rows: list[Row]) -> None:
    """Keep `rows`, resolved under `key` (computed before the files were read, so a
    file changed meanwhile makes the kept listing stale, never wrong)."""
    path = path_for(project)
    root = roots.cache_root()
    try:
        secure.ensure_private_dir(path.rpartition("/")[0], root)
        data = json.dumps({"key": key, "rows": rows}, ensure_ascii=False, default=str)
        secure.replace_private(path, data.encode("utf-8", "surrogateescape"), root)
    except (OSError, ValueError):
        pass  # a read-only or refused cache only costs speed: the next run resolves again
