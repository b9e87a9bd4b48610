"""The `file` target: append one line per record; placeholders in the path.

`{session_id}`, `{date}` (the record's own UTC date: a session crossing midnight, or a
record recovered from the transcript with its earlier time, goes on in another day's
file, and `verify` follows the chain there), `{sensor}`, `{rule}`; `~` expands to
the home folder, before the placeholders are filled (a value never reaches `~user`).
Each value comes from session data (the date from a transcript's timestamp, the id from
the hook payload), so each must be one safe path segment or the delivery fails for
good, with a content-free reason naming the placeholder: not empty, not `.` or `..`, no
`/`, no NUL or other control character; `{date}` must be `YYYY-MM-DD`. A leading `-` is
allowed: the path is opened, never put on an argv. The filled path must be absolute.

Missing folders are created 0700, every one of them and not only the last (os.makedirs
gives the folders above the last the umask's mode: 0755, or 0777 under umask 000), and
new files 0600, since they hold session content. Folders that already exist are left
as they are: they are the user's.
A batch's lines for one file are written with one `write()` on an O_APPEND descriptor,
so concurrent writers (several sessions, the blocking path) never interleave.
`format` picks each line's document (formats/): `json`, the record as it is (the
default, and the only one `ways sensors verify` reads); `text`, one readable line;
`ocsf` or `ecs`, the record mapped for a SIEM (docs/security.md).

Failures: a path that is a folder, runs through a file, is too long, loops, or is
refused by permissions or a read-only file system is permanent (the same write can
never pass), and so is a placeholder value that is not a safe segment; anything else (a
full disk, an I/O error) is retryable.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Sequence

from ..regex import Lazy
from ..roots import makedirs_private
from ..state.secure import write_all
from .base import (
    ERROR,
    PLACEHOLDERS,
    TIMEOUT,
    Context,
    Item,
    Outcome,
    accepted,
    permanent,
    retryable,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .base import Advice
    from .file_spec import FileTarget

    Spec = FileTarget


SECRET_FIELDS: tuple[str, ...] = ()
BATCH_DEFAULT = (512, 0.0)  # group commit for a backlog, no wait when records come alone
FORMAT_FIELD = "format"
FORMATS = {
    "json": "json",
    "text": "text",
    "ocsf": "ocsf",
    "ecs": "ecs",
}  # each `format`: its format


def __getattr__(name: str) -> Any:
    """`Spec` (also named FileTarget) on first use, from file_spec.py: the struct needs
    msgspec, whose import the blocking path does not pay (rules._plain reads the rule's
    consumer from the index's plain form, every field present)."""
    if name in ("Spec", "FileTarget"):
        from .file_spec import FileTarget

        return FileTarget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


TAIL_CAP = 64 << 20  # how far back a cut line is looked for (a record is far smaller)
LOCK_POLL = 0.002

PERMANENT_ERRNOS = frozenset(
    {
        errno.EISDIR,
        errno.ENOTDIR,
        errno.EACCES,
        errno.EPERM,
        errno.EROFS,
        errno.ENAMETOOLONG,
        errno.ELOOP,
        errno.EINVAL,
        errno.EFBIG,
        errno.EEXIST,  # a folder of the path exists as a file
    }
)


DATE_RE = Lazy(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")


class UnsafePath(ValueError):
    """A placeholder's value is not one safe path segment; `str()` names the placeholder,
    never the value (it is session data)."""


def safe_segment(value: str) -> bool:
    """True when `value` names one entry inside a folder and nothing else."""
    return (
        bool(value)
        and value not in (".", "..")
        and "/" not in value
        and all(ord(c) >= 32 and c != "\x7f" for c in value)
    )


def expand(path: str, ctx: Context) -> str:
    """The template with `~` expanded, then its placeholders filled; UnsafePath when a
    value it uses is not a safe segment (or a date not YYYY-MM-DD)."""
    out = os.path.expanduser(path)
    for key in PLACEHOLDERS:
        token = "{" + key + "}"
        if token not in out:
            continue
        value = ctx.placeholder(key)
        if not safe_segment(value) or (key == "date" and not DATE_RE.match(value)):
            raise UnsafePath(f"{token} is not a safe path segment")
        out = out.replace(token, value)
    if not os.path.isabs(out):
        raise UnsafePath("the path is not absolute")
    return out


class LockTimeout(Exception):
    """Another writer held the file's lock until the deadline."""


def _lock(fd: int, deadline: float) -> bool:
    """Take the file's lock; False where the file system has no locks (then the
    append goes unlocked and unmended, as O_APPEND alone keeps lines whole)."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeout from None
            time.sleep(LOCK_POLL)
        except OSError:  # ENOLCK and the like: a file system without flock
            return False


def _mend(fd: int, data: bytes, cut_json: bool) -> bytes:
    """`data`, after repairing an unterminated last line (the module docstring says how);
    the caller holds the lock."""
    size = os.fstat(fd).st_size
    if not size or os.pread(fd, 1, size - 1) == b"\n":
        return data
    start, pos = 0, size
    while pos > 0 and size - pos < TAIL_CAP:
        step = min(pos, 1 << 16)
        chunk = os.pread(fd, step, pos - step)
        nl = chunk.rfind(b"\n")
        if nl >= 0:
            start = pos - step + nl + 1
            break
        pos -= step
    else:
        if pos > 0:  # no line start within TAIL_CAP: not a cut record of ours
            return b"\n" + data
    if cut_json and os.pread(fd, 1, start) == b"{":
        os.ftruncate(fd, start)
        return data
    return b"\n" + data


def _append(path: str, data: bytes, deadline: float, cut_json: bool) -> None:
    folder = os.path.dirname(path)
    if folder:
        makedirs_private(folder)
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        readable = True
    except PermissionError:  # a write-only file: appended to without the repair
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        readable = False
    try:
        if _lock(fd, deadline) and readable:
            data = _mend(fd, data, cut_json)
        write_all(fd, data)
    finally:
        os.close(fd)  # releases the lock


def deliver(spec: FileTarget, batch: Sequence[Item], ctx: Context, deadline: float) -> Outcome:
    if time.monotonic() >= deadline:
        return retryable(TIMEOUT, "deadline passed before the write")
    by_path: dict[str, bytearray] = {}  # one write per file; {date} may differ per record
    if spec.format != "json":
        from ..roots import site_packages

        site_packages()  # a mapped format encodes with msgspec (the hook runs with -S)
        from .. import formats  # only when mapping: the blocking path writes json as it is
    one_file = "{date}" not in os.path.expanduser(spec.path)  # as expand() reads it
    if spec.format == "json" and one_file:  # one file, the lines as they are
        try:
            path = expand(spec.path, ctx)
        except UnsafePath as exc:
            return permanent(ERROR, str(exc))
        return _write({path: b"\n".join([item.line for item in batch]) + b"\n"}, deadline, True)
    paths: dict[str, str] = {}  # by date: the one placeholder that varies in a batch
    for item in batch:
        record, line = item.record, item.line
        date = str(record.get("timestamp") or "")[:10] or ctx.date
        path = paths.get(date, "")
        if not path:
            try:
                path = paths[date] = expand(spec.path, ctx.on(date))
            except UnsafePath as exc:
                return permanent(ERROR, str(exc))
        doc = line if spec.format == "json" else formats.encode(spec.format, record, line)
        by_path.setdefault(path, bytearray()).extend(doc + b"\n")
    files = {path: bytes(data) for path, data in by_path.items()}
    return _write(files, deadline, spec.format != "text")


def _write(by_path: dict[str, bytes], deadline: float, cut_json: bool) -> Outcome:
    """Append each file's lines (one write each); the attempt's Outcome."""
    for path, data in by_path.items():
        try:
            _append(path, data, deadline, cut_json)
        except LockTimeout:
            return retryable(TIMEOUT, "the file stayed locked by another writer")
        except OSError as exc:
            name = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
            if exc.errno in PERMANENT_ERRNOS:
                return permanent(ERROR, name)
            return retryable(ERROR, name)
    return accepted()


def close() -> None:
    """Nothing held between attempts: each opens and closes its files."""


def destination(spec: FileTarget) -> str:
    return f"file {spec.path}"


def off_machine(spec: FileTarget) -> bool:
    return False  # a network file system is the user's own choice of disk


def warnings(spec: FileTarget, at_least_once: bool) -> list[Advice]:
    return []


def unreachable(spec: FileTarget, timeout: float) -> str | None:
    """The nearest folder that exists on the way to the path (up to its first
    placeholder) must be a folder this process can write in."""
    path = spec.path
    folder = os.path.dirname(os.path.expanduser(path))
    folder = folder.split("{", 1)[0].rstrip("/") or "/"
    while not os.path.lexists(folder):
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        return f"{folder} is not a folder, so {path} cannot be created"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{folder} is not writable here, so {path} cannot be created"
    return None
