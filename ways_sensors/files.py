"""The file operations every writer of ways shares.

`locked`: a lock beside the file (`<file>.lock`, filelock), held for one read-change-
write; the lock file is left in place, since removing it would let a waiter and a
newcomer each lock a different inode.

`replace_atomically`: a temporary file in the same folder, renamed over the target, so
a reader (or a SIGKILL) sees the old file or the new one, never half of either; the
target keeps its mode (a new one gets `new_mode`). `update_json_locked`: read, change
and rewrite a small JSON file under an flock, for files several processes update
(counters, the preview registry).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from typing import Any


def replace_atomically(
    path: str, data: str | bytes, new_mode: int = 0o600, fsync: bool = False
) -> None:
    folder = os.path.dirname(path) or "."
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = new_mode
    fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def update_json_locked(path: str, change: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """Apply `change` to the JSON object in `path` (created 0600); it returns whether it
    changed anything, and only then is the file rewritten."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        raw = b""
        while chunk := os.read(fd, 65536):
            raw += chunk
        try:
            data = json.loads(raw) if raw.strip() else {}
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        if change(data):
            out = json.dumps(data, sort_keys=True).encode()
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            os.write(fd, out)
        return data
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(path: str, timeout: float = 10) -> Iterator[None]:
    """Hold `<path>.lock`; a lock held too long or an unwritable folder is a WriteError."""
    from filelock import FileLock, Timeout

    from .errors import WriteError

    folder = os.path.dirname(path) or "."
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        lock = FileLock(path + ".lock", timeout=timeout)
        lock.acquire()
    except Timeout:
        raise WriteError(
            f"{path}.lock is held by another process", hint="try again in a moment"
        ) from None
    except OSError as exc:
        raise WriteError(f"cannot write in {folder}: {exc.strerror}") from None
    try:
        yield
    finally:
        lock.release()
