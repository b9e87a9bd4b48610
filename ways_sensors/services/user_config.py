"""The settings that live in the user's config.yaml only, each with its own check.

A project cannot set them (`ways.project_sensors` would let a project allow itself; the
others say where this user's files go and how long sessions stay). Each setter takes the
parsed value and the `--project` folder (refused), writes config.yaml through
yamlwrite.py and returns (the value written, the file). services/settings.py routes the
keys in SETTERS here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .. import roots
from ..config import yamlwrite
from ..config.layers import read_config
from ..config.settings import (
    CONFIG_KEYS,
    DISPATCH_IDLE,
    METRICS_TEXTFILE,
    PROJECT_SENSORS,
    RETENTION_ABANDONED,
    dig,
)
from ..errors import InvalidError, UsageError


def _project_folders(value: Any, current: Any) -> list[str]:
    """The new `ways.project_sensors` list: `value` is one folder to add or the whole
    list. An empty or blank name is refused: joined to a path it means the current one."""
    refused = InvalidError(
        f"{PROJECT_SENSORS} takes a list of folders (or one folder to add); "
        "an empty name is refused, since it would trust the current folder",
        hint=f"name the folder: ways settings set {PROJECT_SENSORS} /path/to/project",
    )
    if isinstance(value, str):
        if not value.strip():
            raise refused
        if current is None:
            current = []
        if not isinstance(current, list):
            raise InvalidError(
                f"{roots.config_file()}: {PROJECT_SENSORS} is not a list of folders",
                hint=f"set the whole list: ways settings set {PROJECT_SENSORS} '[DIR, ...]'",
            )
        value = [*current, value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise refused
    return list(dict.fromkeys(os.path.abspath(os.path.expanduser(v)) for v in value))


def _set_project_sensors(value: Any, project: str | None) -> tuple[Any, str]:
    if project:
        raise UsageError(
            "ways.project_sensors lives in your user config.yaml only: a project "
            "cannot allow itself",
            hint="run it without --project",
        )
    cfg, problem = read_config()
    if problem:
        raise InvalidError(f"{roots.config_file()}: {problem.message}")
    folders = _project_folders(value, dig(cfg, ("ways", "project_sensors"))[1])
    yamlwrite.set_value(roots.config_file(), ["ways", "project_sensors"], folders)
    return folders, roots.config_file()


_REFUSED = {
    "inside_state_root": "inside the state root",
    "inside_config_root": "inside the config root",
    "inside_cache_root": "inside the cache root",
    "not_a_regular_file": "not a regular file",
    "not_a_metrics_file": "a file that is not a metrics textfile of ours",
}


def _set_metrics_textfile(value: Any, project: str | None) -> tuple[Any, str]:
    from ..dispatch.metrics import RefusedPath, check_path, textfile_path

    if project:
        raise UsageError(f"{METRICS_TEXTFILE} lives in your user config.yaml only")
    try:
        if not isinstance(value, str) or not textfile_path({"ways": {"metrics_textfile": value}}):
            raise ValueError(f"{METRICS_TEXTFILE} takes a file path")
    except ValueError as exc:
        raise InvalidError(
            str(exc), hint=f"ways settings set {METRICS_TEXTFILE} ~/x.prom"
        ) from None
    try:  # the dispatchers would refuse it anyway; say so now
        check_path(os.path.expanduser(value))
    except RefusedPath as exc:
        raise InvalidError(
            f"{METRICS_TEXTFILE}: {value} is {_REFUSED.get(exc.reason, exc.reason)}, "
            "which the textfile would replace",
            hint="name a file of its own, e.g. <textfile collector folder>/ways.prom",
        ) from None
    except OSError:
        pass  # unreadable now; the dispatcher checks again before each write
    yamlwrite.set_value(roots.config_file(), ["ways", "metrics_textfile"], value)
    return value, roots.config_file()


def _set_retention(value: Any, project: str | None) -> tuple[Any, str]:
    from ..dispatch.ages import parse_age

    if project:
        raise UsageError(f"{RETENTION_ABANDONED} lives in your user config.yaml only")
    try:
        parse_age(value)
    except ValueError as exc:
        raise InvalidError(str(exc), hint=f"ways settings set {RETENTION_ABANDONED} 7d") from None
    yamlwrite.set_value(roots.config_file(), RETENTION_ABANDONED.split("."), value)
    return value, roots.config_file()


def _set_idle(value: Any, project: str | None) -> tuple[Any, str]:
    if project:
        raise UsageError(f"{DISPATCH_IDLE} lives in your user config.yaml only")
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 86400
    if not ok:
        raise InvalidError(
            f"{DISPATCH_IDLE} takes a number of seconds from 1 to 86400",
            hint=f"ways settings set {DISPATCH_IDLE} 60",
        )
    yamlwrite.set_value(roots.config_file(), DISPATCH_IDLE.split("."), value)
    return value, roots.config_file()


def _setter(key: str) -> Callable[[Any, str | None], tuple[Any, str]]:
    """A key read and checked by the module that uses it (evidence/): written as given."""

    def write(value: Any, project: str | None) -> tuple[Any, str]:
        if project:
            raise UsageError(f"{key} lives in your user config.yaml only")
        yamlwrite.set_value(roots.config_file(), key.split("."), value)
        return value, roots.config_file()

    return write


SETTERS: dict[str, Callable[[Any, str | None], tuple[Any, str]]] = {
    **{key: _setter(key) for key in CONFIG_KEYS},
    PROJECT_SENSORS: _set_project_sensors,
    METRICS_TEXTFILE: _set_metrics_textfile,
    RETENTION_ABANDONED: _set_retention,
    DISPATCH_IDLE: _set_idle,
}
