"""The file operations every writer of ways shares.

`locked`: an exclusive lock on a file the user owns (a sensor file, config.yaml,
Claude Code's settings.json), held for one read-change-write. The lock file lives in
the state root, never beside the locked file, since config folders are often kept in
version control:

    <state>/locks/                0700
    <state>/locks/<key>.lock      0600, empty; flock'd by the holder, waiters poll
        key = first 32 hex digits of sha256(<real folder>/<file name>), so every path to
        the same directory entry (a symlinked folder, `--project .`) takes one lock

Lock files are never removed: unlinking one would let a waiter (blocked on the old
inode) and a newcomer (creating a new file at the same name) both "hold" the lock. One
empty file per distinct locked path is the price; nothing else is kept.

`replace_atomically`: a temporary file in the same folder, renamed over the target, so
a reader (or a SIGKILL) sees the old file or the new one, never half of either; the
target keeps its mode (a new one gets `new_mode`). `update_json_locked`: read, change
and rewrite a small JSON file under an flock, for files several processes update
(counters, the preview registry); a state file, so opened through secure.py (no link
followed, ours, 0600). The new text is written over the old from offset 0, then the
file is cut to its length: a SIGKILL between the two leaves the new object followed by
the old one's tail, and the reader takes the first JSON object in the file, so a kill
never empties it (truncating first, then writing, left an empty file to a kill in
between: every counter read back as 0). A file that holds no JSON object at all is
logged (`state.unreadable`, the file's name) before it is started again.
"""

from __future__ import annotations

import fcntl
import os
import time

from .. import jsoncore
from ..sha import sha256_hex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def replace_atomically(
    path: str, data: str | bytes, new_mode: int = 0o600, fsync: bool = False
) -> None:
    folder = os.path.dirname(path) or "."
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = new_mode
    import tempfile  # here: the blocking path loads this module and never needs it

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


def _first_object(raw: bytes, path: str) -> dict[str, Any]:
    """The JSON object at the start of `raw` (a tail after it is a killed rewrite's);
    {} for an empty file, and for one holding no object (logged)."""
    text = raw.decode("utf-8", "replace").lstrip()
    if not text:
        return {}
    try:
        data, _ = jsoncore.Decoder().raw_decode(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        return data
    from . import events

    events.log("state.unreadable", file=os.path.basename(path))
    return {}


def update_json_locked(path: str, change: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """Apply `change` to the JSON object in `path` (created 0600); it returns whether it
    changed anything, and only then is the file rewritten."""
    from . import secure

    fd = secure.open_private(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        raw = b""
        while chunk := os.read(fd, 65536):
            raw += chunk
        data = _first_object(raw, path)
        if change(data):
            out = jsoncore.dumps(data, sort_keys=True).encode()
            view, at = memoryview(out), 0
            while at < len(out):
                at += os.pwrite(fd, view[at:], at)
            os.ftruncate(fd, len(out))
        return data
    finally:
        os.close(fd)


def lock_path(path: str, state: str | None = None) -> str:
    """Where the lock of `path` lives (under the state root `state`, default XDG's):
    keyed by the directory entry, not the spelling."""
    from .layout import Layout

    full = os.path.abspath(path)
    folder, name = os.path.split(full)
    entry = os.path.join(os.path.realpath(folder), name)
    key = sha256_hex(os.fsencode(entry))[:32]
    return Layout(state).lock(key)


def locked(path: str, timeout: float = 10, state: str | None = None) -> Locked:
    """`with locked(path):` holds the lock of `path` (see the module docstring); a lock
    held longer than `timeout` seconds, or a state root that cannot hold locks, is a
    WriteError. The descriptor stays open while waiting, so a waiter is visible in /proc
    (and tests)."""
    return Locked(path, timeout, state)


class Locked:
    """locked()'s context manager (a class: contextlib's import is not on the blocking
    hook's path, which imports this module)."""

    def __init__(self, path: str, timeout: float, state: str | None) -> None:
        self.path, self.timeout, self.state = path, timeout, state
        self.fd = -1

    def __enter__(self) -> None:
        from ..errors import WriteError
        from . import secure
        from .layout import Layout

        path = self.path
        lock = lock_path(path, self.state)
        folder = os.path.dirname(lock)
        try:
            root = Layout(self.state).root
            secure.ensure_private_dir(folder, root)
            fd = secure.open_private(lock, os.O_RDWR | os.O_CREAT, root)
        except OSError as exc:
            msg = f"cannot lock {path}: cannot write in {folder}: {exc.strerror}"
            raise WriteError(msg) from None
        try:
            deadline = time.monotonic() + self.timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise WriteError(
                            f"{path} is being changed by another process (it holds {lock})",
                            hint="try again in a moment",
                        ) from None
                    time.sleep(0.05)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def __exit__(self, *exc: object) -> None:
        fd, self.fd = self.fd, -1
        os.close(fd)  # releases the flock; the file stays (see the module docstring)
