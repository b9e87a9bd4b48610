"""Starting a session's dispatcher, detached, from the hook.

The dispatcher holds an exclusive flock on `<state>/sessions/<id>/dispatch.lock` for
its whole life, so "is one running?" is one non-blocking flock attempt. If the lock is
free the hook double-forks: the child calls setsid (a new session and process group,
no controlling terminal), the grandchild points fds 0-2 at /dev/null, closes every
other descriptor and execs `<python> -S <launcher> sensors dispatch -- ID`.
The hook waits only for the short-lived child. Two hooks may both find the lock free;
the second dispatcher then fails to take the lock and exits at once.
Stdlib-only (`posix`, `fcntl`, `sys`).
"""

import sys

from . import roots, secure
from .roots import posix


def launcher_path() -> str:
    return roots.package_dir() + "/_launch.py"


def dispatcher_running(session_id: str) -> bool:
    import fcntl

    from .layout import Layout

    layout = Layout()
    secure.ensure_private_dir(layout.session_dir(session_id), layout.root)
    fd = secure.open_private(layout.dispatch_lock(session_id), posix.O_RDWR | posix.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        posix.close(fd)  # releases the lock if we took it
    return False


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
    """Start the session's dispatcher unless one holds its lock; True when started."""
    if dispatcher_running(session_id):
        return False
    spawn_detached(dispatcher_argv(session_id))
    return True
