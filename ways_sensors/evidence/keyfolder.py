"""The keys' folder at rest, `<state>/keys/` (the layout: keys.py): its files read and
written through secure.py (0700 folders, 0600 files, no links followed), a certificate
written whole or not at all, a private key destroyed by overwriting it with random
bytes before it is unlinked, and the flock that several processes' keyrings share:
shared while signing, exclusive while rolling over. keys.Keyring holds the key tree
that lives in it.
"""

from __future__ import annotations

import fcntl
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..state import events, secure
from ..state.layout import Layout
from .note import Note

_KEY = re.compile(r"key-(s[0-9]{1,2}(?:-[0-3]{1,15})?)\.pem")
_MAX_CERT = 16 << 10


class KeyFolder:
    """One state root's keys folder and its lock."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.dir = layout.keys_dir()
        self._lock_fd: int | None = None
        self._fd_mutex = threading.Lock()
        self._flock_mutex = threading.RLock()  # rollover() inside signer() nests nothing

    def _path(self, name: str) -> str:
        return f"{self.dir}/{name}"

    def _read(self, name: str, cap: int = _MAX_CERT) -> str | None:
        try:
            fd = secure.open_private(self._path(name), os.O_RDONLY, self.layout.root)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as f:
            return f.read(cap).decode("utf-8", "replace")

    def _write_new(self, name: str, data: bytes | bytearray) -> None:
        fd = secure.open_private(
            self._path(name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, self.layout.root
        )
        try:
            secure.write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def _write_cert(self, node: str, note: Note) -> None:
        """A certificate, whole or not at all (a temporary file renamed into place)."""
        secure.ensure_private_dir(self._path("nodes"), self.layout.root)
        tmp = f"nodes/.{node}.tmp"
        self._write_new(tmp, str(note).encode())
        secure.check_replaceable(self._path(f"nodes/{node}.cert"), self.layout.root)
        os.rename(self._path(tmp), self._path(f"nodes/{node}.cert"))

    def key_files(self) -> list[str]:
        """Every private key file in the folder (for `destroy` and for tests)."""
        try:
            return sorted(n for n in os.listdir(self.dir) if _KEY.fullmatch(n))
        except FileNotFoundError:
            return []

    def destroy(self, name: str) -> None:
        """Overwrite a private key file with random bytes, flush it, then unlink it."""
        path = self._path(name)
        try:
            fd = secure.open_private(path, os.O_WRONLY, self.layout.root)
        except FileNotFoundError:
            return
        try:
            size = os.fstat(fd).st_size
            os.write(fd, os.urandom(max(size, 1)))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.unlink(path)
        events.log("evidence.key_destroyed", file=name)

    @contextmanager
    def _locked(self, exclusive: bool) -> Iterator[None]:
        """The keys' flock. The descriptor is opened (and the folder checked) once per
        Keyring: a checkpoint per batch must not pay for the path checks each time."""
        with self._fd_mutex:
            if self._lock_fd is None:
                secure.ensure_private_dir(self.dir, self.layout.root)
                self._lock_fd = secure.open_private(
                    self._path("keys.lock"), os.O_RDWR | os.O_CREAT, self.layout.root
                )
            fd = self._lock_fd
        # flock is per open file description: one Keyring's threads share it, so they
        # take it one at a time (the mutex), shared or exclusive against other processes
        with self._flock_mutex:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _files(self) -> list[str]:
        """The key tree's nodes that have a private key file."""
        return [m.group(1) for n in self.key_files() if (m := _KEY.fullmatch(n))]
