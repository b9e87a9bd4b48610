"""The state root's safety rules, the way OpenSSH treats ~/.ssh: every folder ways makes or
uses under the state root and every file it opens there passes through here.

* The root (`roots.state_root`, or a Layout's): created 0700 (with any missing parent,
  0700 too) when absent. An existing root must be a real folder, not a symbolic link,
  owned by the effective user; group or other permission bits are taken away (0700).
  A root owned by anyone else is refused: nothing is written in it, not even a log
  line (the commands say why in one line; the hook exits 0 without a word).
* Every folder under the root, on the way to the one asked for: the same rules; a
  missing one is made 0700.
* Every file is opened with O_NOFOLLOW (a symbolic link is refused, never followed),
  O_NONBLOCK (a FIFO planted where a file should be never hangs a writer; it is then
  refused as not a regular file) and O_CLOEXEC, then checked through its descriptor:
  a regular file, owned by us, with one link (a hard link could alias a file outside
  the root); group or other bits are taken away (0600). O_NONBLOCK changes nothing for
  a regular file. A plain file where a folder should be, or a folder where a file
  should be, fails as the system call would (NotADirectoryError, IsADirectoryError).
* `replace_private`: a temporary file made O_EXCL beside the target, renamed over it; a
  link, or anything else not ours, at the target is refused rather than replaced.

A refusal raises `UnsafeState`, an OSError, so every writer's existing handling of a
failed write applies (the hook swallows it, a worker retries, a command prints one
line through cli.py). Each repair and refusal below the root is logged content-free
(`state.repaired` / `state.refused`, with the path relative to the root) once the
operation is over; a refused root is not logged anywhere.

The checks are a few lstat and fstat calls, so the hook's spool append uses them too:
this module imports `posix` and the built-in `_thread` only (the hook's fast path).
"""

import _thread  # built in, and already loaded by the interpreter's start-up

from ..roots import posix

_FMT, _DIR, _REG, _LNK = 0o170000, 0o040000, 0o100000, 0o120000
_EACCES = 13
_FLAGS = getattr(posix, "O_NOFOLLOW", 0) | getattr(posix, "O_CLOEXEC", 0) | posix.O_NONBLOCK

_notes: "list[tuple[str, str, str]]" = []  # (kind, path under the root, detail)
_flushing = 0  # the thread now logging the notes (0: none)


class UnsafeState(OSError):
    """A state path ways refuses to use; `message` is the one line a command prints."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(_EACCES, "refusing " + path + ": " + why, path)
        self.message = "refusing " + path + ": " + why
        self.why = why


def write_all(fd: int, data: bytes | bytearray) -> None:
    """Every byte of `data` to `fd`: os.write may write fewer (a signal, a pipe, a full
    disk's last block), and a record cut short is a record lost."""
    view = memoryview(data)
    while view:
        view = view[posix.write(fd, view) :]


def _uid() -> int:
    return posix.geteuid()


def _owner(uid: int) -> str:
    return "it is owned by uid %d, not by you (uid %d)" % (uid, _uid())


def _refuse(path: str, root: str, why: str) -> UnsafeState:
    if path != root:  # a refused root is reported by the command, never logged inside it
        _note("state.refused", path, root, why)
        flush_notes()
    return UnsafeState(path, why)


def _root_of(path: str, root: str) -> str:
    """The state root `path` lies under, for log lines: `root`, else XDG's when it holds
    `path`, else the path's folder."""
    if root:
        return root.rstrip("/") or "/"
    from ..roots import state_root

    xdg = state_root()
    return xdg if path.startswith(xdg + "/") else path.rpartition("/")[0]


def _note(kind: str, path: str, root: str, detail: str) -> None:
    if _flushing == _thread.get_ident() and kind == "state.refused":
        return  # events.log itself refused while logging: it cannot be logged
    rel = path[len(root) + 1 :] if path.startswith(root + "/") else "."
    _notes.append((kind, rel, detail))


def flush_notes() -> None:
    """Log the repairs and refusals noted so far (events.log, which itself comes here:
    a note it adds is logged by the same loop)."""
    global _flushing
    if _flushing or not _notes:
        return  # another thread logs them (or this one already is)
    _flushing = _thread.get_ident()
    try:
        from .logline import line

        while _notes:
            kind, rel, detail = _notes.pop(0)
            field = "reason" if kind == "state.refused" else "mode"
            append_log(line(kind, {"path": rel, field: detail}))
    finally:
        _flushing = 0


def append_log(text: bytes) -> None:
    """Append one line to `<state>/events.log` (events.py, logline.py), 0600 in the 0700
    state root, in one write; past logline.LOG_MAX it becomes events.log.1. Never
    raises: the log is the last resort (the hook calls it from its last handler)."""
    try:
        from .layout import Layout
        from .logline import LOG_MAX

        layout = Layout()
        path = layout.events_log()
        ensure_private_dir(layout.root, layout.root)
        fd = open_private(path, posix.O_WRONLY | posix.O_APPEND | posix.O_CREAT, layout.root)
        try:
            posix.write(fd, text)
            if posix.fstat(fd).st_size > LOG_MAX:
                _rotate(path, fd)
        finally:
            posix.close(fd)
    except BaseException:
        pass


def _rotate(path: str, fd: int) -> None:
    """events.log past LOG_MAX becomes events.log.1 (replacing the older one), unless
    another writer rotated it already (the name no longer names our file)."""
    st = posix.fstat(fd)
    try:
        now = posix.lstat(path)
    except OSError:
        return
    if (now.st_ino, now.st_dev) == (st.st_ino, st.st_dev):
        posix.rename(path, path + ".1")


def _check_dir(path: str, root: str) -> None:
    """An existing folder: a real one, ours, 0700 (repaired when it is ours)."""
    st = posix.lstat(path)
    kind = st.st_mode & _FMT
    if kind == _LNK:
        raise _refuse(path, root, "it is a symbolic link")
    if kind != _DIR:
        raise NotADirectoryError(20, "Not a directory", path)  # what mkdir or open would say
    if st.st_uid != _uid():
        raise _refuse(path, root, _owner(st.st_uid))
    if st.st_mode & 0o077:
        flags = posix.O_RDONLY | getattr(posix, "O_DIRECTORY", 0) | _FLAGS
        try:
            fd = posix.open(path, flags)
        except OSError:
            raise _refuse(path, root, "it changed while being checked") from None
        try:
            again = posix.fstat(fd)
            if again.st_ino != st.st_ino or again.st_dev != st.st_dev:
                raise _refuse(path, root, "it changed while being checked")
            posix.fchmod(fd, 0o700)
        finally:
            posix.close(fd)
        _note("state.repaired", path, root, "%04o" % (st.st_mode & 0o7777))


def _make_parents(path: str) -> None:
    """Folders above the root: made 0700 when missing, otherwise left as they are (they
    are the user's: ~/.local/state, an XDG_STATE_HOME)."""
    parent = path.rpartition("/")[0]
    if not parent:
        return
    try:
        posix.stat(parent)
        return
    except OSError:
        pass
    _make_parents(parent)
    try:
        posix.mkdir(parent, 0o700)
    except FileExistsError:
        pass


def ensure_private_dir(path: str, root: str, create: bool = True) -> None:
    """Make or check `path` and every folder from the state root `root` down to it (see
    the module docstring). `create=False`: a missing folder is FileNotFoundError."""
    root = root.rstrip("/") or "/"
    if path != root and not path.startswith(root + "/"):
        raise ValueError("not under the state root: " + path)
    current = root
    parts = [p for p in path[len(root) :].split("/") if p] if path != root else []
    for i in range(len(parts) + 1):
        if i:
            current = current + "/" + parts[i - 1]
        try:
            _check_dir(current, root)
            continue
        except FileNotFoundError:
            if not create:
                raise
        if i == 0:
            _make_parents(current)
        try:
            posix.mkdir(current, 0o700)
        except FileExistsError:
            _check_dir(current, root)  # made by a concurrent writer meanwhile
    flush_notes()


def _check_file(fd: int, path: str, root: str) -> None:
    st = posix.fstat(fd)
    if st.st_mode & _FMT != _REG:
        raise _refuse(path, root, "it is not a regular file")
    if st.st_uid != _uid():
        raise _refuse(path, root, _owner(st.st_uid))
    if st.st_nlink > 1:
        raise _refuse(path, root, "it has %d hard links" % st.st_nlink)
    if st.st_mode & 0o077:
        posix.fchmod(fd, 0o600)
        _note("state.repaired", path, root, "%04o" % (st.st_mode & 0o7777))


def open_private(path: str, flags: int, root: str = "", mode: int = 0o600) -> int:
    """A descriptor on the state file `path` (its folder already checked by
    ensure_private_dir), opened with `flags` and the safety flags, checked and
    repaired (see the module docstring). `root` names the state root in log lines."""
    root = _root_of(path, root)
    try:
        fd = posix.open(path, flags | _FLAGS, mode)
    except OSError:
        try:
            st = posix.lstat(path)
        except OSError:
            st = None
        kind = st.st_mode & _FMT if st is not None else None
        if kind == _LNK:
            raise _refuse(path, root, "it is a symbolic link") from None
        if kind is not None and kind not in (_REG, _DIR):  # a folder: open's own error
            raise _refuse(path, root, "it is not a regular file") from None
        raise
    try:
        _check_file(fd, path, root)
    except BaseException:
        posix.close(fd)
        raise
    flush_notes()
    return fd


def check_replaceable(path: str, root: str = "") -> None:
    """Before renaming a new file over `path`: absent, or a regular file of ours. A
    link is refused (not silently replaced), so a planted one is noticed and logged."""
    root = _root_of(path, root)
    try:
        st = posix.lstat(path)
    except FileNotFoundError:
        return
    kind = st.st_mode & _FMT
    if kind == _LNK:
        raise _refuse(path, root, "it is a symbolic link")
    if kind != _REG:
        raise _refuse(path, root, "it is not a regular file")
    if st.st_uid != _uid():
        raise _refuse(path, root, _owner(st.st_uid))


def replace_private(path: str, data: bytes, root: str = "") -> None:
    """Replace the state file `path` with `data`, 0600, atomically: a reader or a
    SIGKILL sees the old file or the new one (a kill can leave a `.<name>.<random>.tmp`
    beside it, which the session's removal takes away)."""
    check_replaceable(path, root)
    folder, _, name = path.rpartition("/")
    tmp = "%s/.%s.%s.tmp" % (folder, name, posix.urandom(6).hex())
    flags = posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL | _FLAGS
    fd = posix.open(tmp, flags, 0o600)
    try:
        try:
            write_all(fd, data)
        finally:
            posix.close(fd)
        posix.rename(tmp, path)
    except BaseException:
        try:
            posix.unlink(tmp)
        except OSError:
            pass
        raise
