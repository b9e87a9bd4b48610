"""The managed layer's config.yaml: the administrator's settings below the user's, and
the keys the user cannot change.

`<managed root>/config.yaml` (roots.managed_roots: /etc/xdg/agent-ways/config.yaml and
the folders of $XDG_CONFIG_DIRS) holds the same keys as the user's config.yaml, plus

    locked: [ways.dispatch_idle_seconds, ways.identity]   # dotted keys

The effective configuration is the managed files merged in order (a later one's key
winning), then the user's config.yaml merged over them (mappings by key), then every
locked key put back as the managed files have it (removed, if they do not set it).
`ways settings set|unset` refuses a locked key, naming the managed file.
"""

from __future__ import annotations

from typing import Any

from .. import roots


def files() -> list[str]:
    """The managed config.yaml files, in the order they apply."""
    return [root + "/config.yaml" for root in roots.managed_roots()]


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        both = isinstance(out.get(k), dict) and isinstance(v, dict)
        out[k] = _merge(out[k], v) if both else v
    return out


def managed() -> tuple[dict[str, Any], dict[str, str], list[tuple[str, str]]]:
    """(the merged managed settings, locked dotted key -> the file locking it, the
    files that could not be read with why)."""
    from .yamlread import YamlError, read_yaml

    merged: dict[str, Any] = {}
    locked: dict[str, str] = {}
    broken: list[tuple[str, str]] = []
    for path in files():
        try:
            data, _ = read_yaml(path)
        except FileNotFoundError:
            continue
        except (YamlError, OSError) as exc:
            broken.append((path, getattr(exc, "message", None) or str(exc)))
            continue
        if not isinstance(data, dict):
            broken.append((path, "config.yaml must be a mapping"))
            continue
        keys = data.pop("locked", None)
        merged = _merge(merged, data)
        for key in keys if isinstance(keys, list) else ():
            if isinstance(key, str):
                locked.setdefault(key, path)
    return merged, locked, broken


def _dig(data: Any, parts: list[str]) -> tuple[bool, Any]:
    for p in parts:
        if not isinstance(data, dict) or p not in data:
            return False, None
        data = data[p]
    return True, data


def _put(data: dict[str, Any], parts: list[str], found: bool, value: Any) -> dict[str, Any]:
    out = dict(data)
    head, rest = parts[0], parts[1:]
    if not rest:
        if found:
            out[head] = value
        else:
            out.pop(head, None)
        return out
    inner = out.get(head)
    if not isinstance(inner, dict):
        if not found:
            return out
        inner = {}
    out[head] = _put(inner, rest, found, value)
    return out


def effective(user: dict[str, Any]) -> dict[str, Any]:
    """The user's settings over the managed ones, the locked keys the managed files'."""
    base, locked, _ = managed()
    if not base and not locked:
        return user
    out = _merge(base, user)
    for key in locked:
        found, value = _dig(base, key.split("."))
        out = _put(out, key.split("."), found, value)
    return out


def lock_of(key: str) -> str | None:
    """The managed file that locks `key` (or a mapping above it), or None."""
    _, locked, _ = managed()
    parts = key.split(".")
    for i in range(len(parts), 0, -1):
        held = locked.get(".".join(parts[:i]))
        if held:
            return held
    return None


def refuse(key: str) -> None:
    held = lock_of(key)
    if held:
        from ..errors import InvalidError

        raise InvalidError(
            f"{key} is locked by the managed file {held}",
            hint="the administrator's managed layer decides it",
        )
