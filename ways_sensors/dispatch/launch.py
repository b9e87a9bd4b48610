"""Starting a session's dispatcher, detached, from the hook.

The dispatcher holds an exclusive flock on `<state>/sessions/<id>/dispatch.lock` for
its whole life, so "is one running?" is one non-blocking flock attempt. If the lock is
free the hook double-forks: the child calls setsid (a new session and process group,
no controlling terminal), the grandchild points fds 0-2 at /dev/null, closes every
other descriptor and execs `<python> -S <launcher> sensors dispatch -- ID`.
The hook waits only for the short-lived child. Two hooks may both find the lock free;
the second dispatcher then fails to take the lock and exits at once.
Stdlib-only (`posix`, `fcntl`, `sys`).

At a session start the hook also starts the resumer (resume.py), detached the same way,
for sessions whose dispatcher exited owing records: at most one process, and only when
markers exist, no resumer holds `resume/resume.lock`, and one may be due: `resume/next`
is past, or the pending folder changed (a marker was added) since it was written.
"""

import sys

from .. import roots
from ..roots import posix
from ..state import secure


def launcher_path() -> str:
    return roots.package_dir() + "/_launch.py"


def _locked(path: str) -> bool:
    """Someone holds an flock on `path` (made if missing)."""
    import fcntl

    fd = secure.open_private(path, posix.O_RDWR | posix.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        posix.close(fd)  # releases the lock if we took it
    return False


def dispatcher_running(session_id: str) -> bool:
    """Someone holds the session's dispatch.lock; FileNotFoundError when its folder is
    gone. Every caller has just appended to the session's spool, and a folder goes only
    with its spool drained (dispatcher.finish, under spool.lock): the frame was served
    by the dispatcher that left, and making the folder again would start one for
    nothing, to idle out its minute on a session that has ended."""
    from ..state.layout import Layout

    layout = Layout()
    secure.ensure_private_dir(layout.session_dir(session_id), layout.root, create=False)
    return _locked(layout.dispatch_lock(session_id))


def dispatcher_argv(session_id: str) -> list[str]:
    return [sys.executable, "-S", launcher_path(), "sensors", "dispatch", "--", session_id]


def spawn_detached(argv: list[str]) -> None:
    """Run argv in a new session with no inherited descriptors; do not wait for it."""
    pid = posix.fork()
    if pid == 0:  # child
        try:
            posix.setsid()
            if posix.fork() != 0:
                posix._exit(0)
            null = posix.open("/dev/null", posix.O_RDWR)
            for target in (0, 1, 2):
                posix.dup2(null, target)
            posix.closerange(3, 65536)
            posix.execv(argv[0], argv)
        finally:
            posix._exit(0)
    while True:
        try:
            posix.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            break


def ensure_dispatcher(session_id: str) -> bool:
    """Start the session's dispatcher unless one holds its lock or the session's folder
    is gone (dispatcher_running says why); True when started."""
    try:
        if dispatcher_running(session_id):
            return False
    except FileNotFoundError:
        return False
    spawn_detached(dispatcher_argv(session_id))
    return True


def resumer_argv() -> list[str]:
    return [sys.executable, "-S", launcher_path(), "sensors", "dispatch", "--resume-owed"]


def ensure_resumer() -> bool:
    """Start the resumer when sessions are owed, none runs and one may be due; True when
    started. A listdir, two stats, a small read and a non-blocking flock."""
    import time

    from ..state.layout import Layout

    layout = Layout()
    try:
        changed = posix.stat(layout.pending_dir()).st_mtime_ns
    except OSError:
        return False
    if not layout.pending_sessions():
        return False
    try:
        fd = posix.open(layout.resume_next(), posix.O_RDONLY)
        try:
            written = posix.fstat(fd).st_mtime_ns
            due = float(posix.read(fd, 64).strip() or b"0")
        finally:
            posix.close(fd)
        if time.time() < due and changed <= written:
            return False
    except (OSError, ValueError):
        pass
    roots.makedirs_private(layout.resume_dir())
    if _locked(layout.resume_lock()):
        return False
    spawn_detached(resumer_argv())
    return True
