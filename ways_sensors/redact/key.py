"""The per-install redaction key, and the tokens it makes.

On disk: `<state>/redaction.key`, exactly 32 random bytes, a regular file owned by the
user, mode 0600 (no group or other bits), in the 0700 state folder. Nothing else.

Created once, atomically: 32 bytes from `os.urandom` go into a temporary file in the
same folder (0600, `O_EXCL`), which is fsynced and then hard-linked to the final name;
`link` fails when the name exists, so of several first uses exactly one key wins and
every process reads that one, complete: no process ever sees an empty or partial key,
whatever crashes when. The temporary name is removed either way.

A key of ours with group or other mode bits (a restore, a copy with a loose umask) is
repaired to 0600 through its descriptor and used, logged `state.repaired`, as the state
root is (secure.py). A key that is there but wrong otherwise (another length, another
owner, a symlink, a hard link, anything not a regular file) is refused, never used and
never replaced: `KeyRefused` says why in one line, `key_status()` says it for `ways
status`, and masking a record that needs a token raises it: an `at_least_once` rule
holds the record and tries again until the key can be used (unfinished.py), a
`best_effort` one counts it lost; none sends it with a guessable token.

`token(secret)` is the first 8 hex digits of HMAC-SHA256(key, secret): the same secret
gives the same token in every record of one install, and another token elsewhere.
"""

from __future__ import annotations

import _thread  # not threading: the blocking path's imports (dispatch/blocking.py)
import errno
import os
import stat

from .. import roots
from ..sha import hmac_sha256_hex

KEY_BYTES = 32
_lock = _thread.allocate_lock()
_cache: dict[str, bytes] = {}


class KeyRefused(Exception):
    """The redaction key on disk cannot be used; the message says why, in one line."""


def key_path() -> str:
    from ..state.layout import Layout

    return Layout().redaction_key()


def _read(path: str) -> bytes:
    """The key at `path`, checked; FileNotFoundError when there is none."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise KeyRefused(f"redaction key {path} is a symlink; remove it") from None
        if exc.errno == errno.ENOENT:
            raise
        raise KeyRefused(f"redaction key {path} cannot be read ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise KeyRefused(f"redaction key {path} is not a regular file; remove it")
        if st.st_uid != os.geteuid():
            raise KeyRefused(f"redaction key {path} is owned by uid {st.st_uid}, not by you")
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            if st.st_nlink != 1:
                raise KeyRefused(
                    f"redaction key {path} has mode {mode:04o} and {st.st_nlink} links;"
                    " it must be 0600 with one link"
                )
            os.fchmod(fd, 0o600)  # ours: repaired, as the state root is (secure.py)
            _repaired(path, mode)
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != KEY_BYTES:
        raise KeyRefused(
            f"redaction key {path} holds {len(data) if len(data) <= KEY_BYTES else 'more than 32'}"
            f" bytes, not {KEY_BYTES}; remove it to create a new one (tokens will change)"
        )
    return data


def _repaired(path: str, mode: int) -> None:
    """Log a repaired key mode (content-free), as secure.py logs a repaired state file."""
    from ..state import events

    events.log("state.repaired", path=os.path.basename(path), mode=f"{mode:04o}")


def _create(path: str) -> None:
    """Write a new key beside `path` and link it there, unless a key got there first."""
    from ..state.secure import write_all

    folder = os.path.dirname(path)
    roots.makedirs_private(folder)
    tmp = os.path.join(folder, f".redaction.key.{os.getpid()}.{os.urandom(6).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        try:
            data = os.urandom(KEY_BYTES)
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # fails if a key is there: then that one is the key
        except FileExistsError:
            pass
        else:
            _fsync_folder(folder)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _fsync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def install_key() -> bytes:
    """The per-install HMAC key, created on first use; KeyRefused when it is unusable."""
    path = key_path()
    with _lock:
        key = _cache.get(path)
        if key is not None:
            return key
        try:
            key = _read(path)
        except FileNotFoundError:
            _create(path)
            key = _read(path)
        _cache[path] = key
        return key


def key_status() -> str:
    """One line for `ways status`: "ok", "missing (created on first use)", or why the key
    on disk is refused. Creates nothing."""
    try:
        _read(key_path())
    except FileNotFoundError:
        return "missing (created on first use)"
    except KeyRefused as exc:
        return f"refused: {exc}"
    return "ok"


def token(secret: str) -> str:
    return hmac_sha256_hex(install_key(), secret.encode("utf-8", "surrogatepass"))[:8]
