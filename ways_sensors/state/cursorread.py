"""Reading the session's cursor log and batch files (their formats, and who writes them:
cursorlog.py), for the dispatcher's writer and for readers in other processes.

Readers in other processes (`ways status`, retention, `verify`'s heads, the blocking
path's `layout.rule_head`) take the log as it is: a torn tail is ignored, a batch file
that vanished meanwhile (delivered) is read as the newer log says. They parse the log
once per change of its inode, size or mtime (a small memo), so a pass over 2,000 rules
reads it once. An older version's `<key>.json` cursor, not yet migrated, is read too.
This module imports the standard library only (layout.py reads heads through it).
"""

from __future__ import annotations

import os

from .. import jsoncore

TYPE_CHECKING = False  # type checkers read this as True: typing stays off the hook's paths
if TYPE_CHECKING:
    from typing import Any

LOG = "cursors.log"
BATCH = ".batch"
READ_CAP = 256 << 20  # a reader gives up on a log or batch file past this (layout.py)

_memo: dict[str, tuple[tuple[int, int, int], dict[str, dict[str, Any]]]] = {}


def batch_name(key: str, token: str) -> str:
    return key + "." + token + BATCH


def read_bytes(path: str, cap: int = READ_CAP) -> bytes | None:
    """A regular file's bytes (no link followed), or None."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_mode & 0o170000 != 0o100000 or st.st_size > cap:
            return None
        chunks, size = [], 0
        while size <= cap:
            chunk = os.read(fd, cap + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks) if size <= cap else None
    except OSError:
        return None
    finally:
        os.close(fd)


def parse_log(raw: bytes) -> dict[str, dict[str, Any]]:
    """The log's last line per key (lines that do not parse are ignored)."""
    out: dict[str, dict[str, Any]] = {}
    for line in raw.split(b"\n"):
        try:
            st = jsoncore.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(st, dict) and isinstance(st.get("rule"), str):
            out[st.pop("rule")] = st
    return out


def legacy_states(
    folder: str, names: list[str], known: Any, strict: bool = False
) -> dict[str, dict[str, Any]]:
    """The `<key>.json` cursors of older versions whose key the log does not name
    (`strict`: one that cannot be read is an OSError, else it is left out)."""
    out = {}
    for name in names:
        key = name[: -len(".json")]
        if name.endswith(".json") and key not in known:
            try:
                st = jsoncore.loads(read_bytes(folder + "/" + name) or b"")
            except (ValueError, RecursionError):
                st = None
            if isinstance(st, dict):
                out[key] = st
            elif strict:
                raise OSError("unreadable cursor: " + name)
    return out


def _states(folder: str, strict: bool) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(the log's states, shared with the memo: never changed; older `.json`s')."""
    path = folder + "/" + LOG
    try:
        st = os.lstat(path)
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        stamp = (0, 0, 0)
    hit = _memo.get(path)
    if hit is not None and hit[0] == stamp:
        states = hit[1]
    else:
        raw = read_bytes(path) if stamp[0] else b""
        if raw is None and strict:
            raise OSError("unreadable cursor log: " + path)
        states = parse_log(raw or b"")
        if len(_memo) > 64:
            _memo.clear()
        _memo[path] = (stamp, states)
    names = [n for n in list_names(folder) if n.endswith(".json")]
    return states, legacy_states(folder, names, states, strict) if names else {}


def read_states(folder: str, strict: bool = False) -> dict[str, dict[str, Any]]:
    """Every rule's cursor in the session's `cursors/` folder, as another process sees
    it: {key: state}, a state's `batch` naming its pending batch (not read); an older
    version's `<key>.json` (not yet migrated) with its `pending` as it was. `strict`: a
    log or a `.json` that is there but cannot be read is an OSError."""
    states, legacy = _states(folder, strict)
    return {**{k: dict(v) for k, v in states.items()}, **legacy}


def read_batch(folder: str, key: str, token: str) -> list[dict[str, Any]] | None:
    """A batch file's records; None when it is missing or does not parse."""
    raw = read_bytes(folder + "/" + batch_name(key, token))
    if raw is None:
        return None
    try:
        recs = [jsoncore.loads(line) for line in raw.split(b"\n") if line]
    except (ValueError, RecursionError):
        return None
    return recs if recs and all(isinstance(r, dict) for r in recs) else None


def read_cursor(folder: str, key: str) -> dict[str, Any] | None:
    """One rule's cursor with its `pending` records read (None: no cursor)."""
    for _ in range(2):  # a batch delivered and unlinked meanwhile: the log says so now
        states, legacy = _states(folder, False)
        if key not in states:
            return legacy.get(key)  # an older version's `.json`, `pending` inline
        st = dict(states[key])
        st["pending"] = read_batch(folder, key, str(st["batch"])) if st.get("batch") else None
        if st["pending"] is not None or not st.get("batch"):
            return st
    return st


def list_names(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []
