"""The `command` target: run argv without a shell; exit 0 is acceptance.

The record goes on stdin as one JSON line (`input: stdin`, the default) or as the last
argument (`input: args`), as it is or mapped (`format: ocsf` or `ecs`, formats/). A
batch goes on one stdin, one line per record, or as one run per record with
`input: args`. stdout and stderr go to /dev/null: a consumer's
chatter never reaches a terminal or Claude Code.

Killing at the deadline takes every descendant, not only the process group: a
grandchild that called setsid (`setsid cmd &`) or a double-forked daemon has left the
group. The command starts in its own session and process group and, on Linux, as a
child subreaper (prctl PR_SET_CHILD_SUBREAPER, set between fork and exec through
ctypes; the flag survives exec): a descendant whose parent exits is re-parented to the
command rather than to init, so while the command lives its whole tree hangs below it.
At the deadline (`kill_tree`) the group gets SIGSTOP, then the tree is read from
/proc (each process's parent in /proc/<pid>/stat, stdlib only: the blocking path runs
this in the hook) and every descendant found gets SIGSTOP, round after round until no
new one appears (a stopped process cannot fork), then everything found and the group
get SIGKILL. SIGKILL cannot be ignored, so a command that ignores SIGTERM goes too.
Without /proc or prctl (not Linux) only the process group is killed. A descendant that
escapes anyway (a setuid program, another user's process) is out of reach by design.

Failures: a command that does not exist or is not executable (or a `cwd` that is not
a folder) is permanent, and so is a record too long for the argument list (E2BIG with
`input: args`: Linux caps one argument at 128 KiB), which an at_least_once rule parks
as a dead letter instead of retrying it forever; a non-zero exit, a timeout and a
failed fork are retryable. With `input: args` every record is on the command line, which
any local user can read in /proc/<pid>/cmdline while the command runs: `lint` warns,
and stdin (the default) is the private way.
"""

from __future__ import annotations

import errno
import os
import sys
import time

from .base import (
    ERROR,
    HIDDEN,
    REFUSED,
    TIMEOUT,
    Context,
    Item,
    Outcome,
    accepted,
    hide,
    permanent,
    retryable,
)
from .spawn import signals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from .base import Advice
    from .command_spec import CommandTarget

    Spec = CommandTarget


SECRET_FIELDS: tuple[str, ...] = ("env",)
BATCH_DEFAULT = (1, 0.0)  # one run per record unless the rule sets `batch:`
FORMAT_FIELD = "format"
FORMATS = {"json": "json", "ocsf": "ocsf", "ecs": "ecs"}  # each `format`: the format it sends


def __getattr__(name: str) -> Any:
    """`Spec` (also named CommandTarget) on first use, from command_spec.py: the struct
    needs msgspec, whose import the blocking path does not pay (rules._plain reads the
    rule's consumer from the index's plain form, every field present)."""
    if name in ("Spec", "CommandTarget"):
        from .command_spec import CommandTarget

        return CommandTarget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# the program (or its folder) cannot be run as configured, whatever is retried; E2BIG:
# the record is too long for the argument list (`input: args`), whatever is retried
PERMANENT_ERRNOS = frozenset(
    {
        errno.ENOENT,
        errno.EACCES,
        errno.EPERM,
        errno.ENOTDIR,
        errno.ENOEXEC,
        errno.EISDIR,
        errno.E2BIG,
    }
)


PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
KILL_ROUNDS = 64  # each round stops every new descendant; a few suffice in practice
_prctl: Any = None  # libc's prctl once looked up; False where there is none


def _subreaper_preexec() -> Callable[[], None] | None:
    """The function the child runs before exec to become a child subreaper, or None
    off Linux. prctl is looked up here, in the parent: the child only calls it."""
    global _prctl
    if not sys.platform.startswith("linux"):
        return None
    if _prctl is None:
        try:
            _prctl = _libc_prctl()
        except Exception:  # another interpreter's _ctypes: ctypes itself
            try:
                import ctypes

                fn = ctypes.CDLL(None, use_errno=True).prctl
                fn.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
                fn.restype = ctypes.c_int
                _prctl = fn
            except (ImportError, OSError, AttributeError):
                _prctl = False
    if not _prctl:
        return None
    prctl = _prctl

    def become_subreaper() -> None:
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # a failure leaves the group kill

    return become_subreaper


def _libc_prctl() -> Any:
    """libc's prctl(option, arg2, arg3, arg4, arg5) -> int, made with `_ctypes`, the C
    module under ctypes: ctypes/__init__.py's import (its forty types, struct) would
    cost a blocking hook more than one function that needs an int and an unsigned long
    is worth (bench/RESULTS.md, 2026-12-03 15:53). These are ctypes' own steps: a simple
    type per C type, a function-pointer class naming its argument and result types, and
    the symbol looked up in the process's own libc (dlopen(NULL), as CDLL(None))."""
    ct: Any = __import__("_ctypes")  # no stub for the type checker
    c_int = type("c_int", (ct._SimpleCData,), {"_type_": "i"})
    c_ulong = type("c_ulong", (ct._SimpleCData,), {"_type_": "L"})
    attrs = {"_flags_": ct.FUNCFLAG_CDECL | ct.FUNCFLAG_USE_ERRNO, "_restype_": c_int}
    attrs["_argtypes_"] = (c_int, c_ulong, c_ulong, c_ulong, c_ulong)
    function = type("prctl", (ct.CFuncPtr,), attrs)
    libc = type("libc", (), {"_handle": ct.dlopen(None, 0)})()  # 0: RTLD_LOCAL, as CDLL
    return function(("prctl", libc))


def _children() -> dict[int, list[int]]:
    """{parent pid: [child pids]} of every process /proc shows (empty without /proc)."""
    out: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read(1024)
            ppid = int(stat[stat.rindex(b")") + 2 :].split(None, 2)[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not readable
        out.setdefault(ppid, []).append(int(name))
    return out


def descendants(pid: int) -> list[int]:
    """Every process below `pid` in the process tree, now."""
    tree = _children()
    found: list[int] = []
    todo = list(tree.get(pid, ()))
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(tree.get(p, ()))
    return found


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signals.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_tree(pid: int) -> None:
    """SIGKILL the command `pid`, its process group and every descendant, including
    those that left the group (setsid, double fork): freeze, find, kill (module
    docstring)."""
    try:
        os.killpg(pid, signals.SIGSTOP)
    except (ProcessLookupError, PermissionError):
        pass
    found: set[int] = set()
    for _ in range(KILL_ROUNDS):
        new = [p for p in descendants(pid) if p not in found]
        if not new:
            break
        for p in new:
            _signal(p, signals.SIGSTOP)
        found.update(new)
    for p in found:
        _signal(p, signals.SIGKILL)
    kill_group(pid)


def _run(
    spec: CommandTarget, argv: list[str], stdin_data: bytes | None, deadline: float
) -> Outcome:
    from . import spawn  # fork and exec with os alone: no subprocess on the blocking path

    env = None
    if spec.env:
        env = {**os.environ, **{k: os.path.expandvars(v) for k, v in spec.env.items()}}
    if deadline - time.monotonic() <= 0:
        return retryable(TIMEOUT, "deadline passed before the start")
    try:
        child = spawn.start(
            argv,
            stdin=stdin_data is not None,
            env=env,
            cwd=os.path.expanduser(spec.cwd) if spec.cwd else None,
            before_exec=_subreaper_preexec(),
        )
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
        if exc.errno in PERMANENT_ERRNOS:
            return permanent(ERROR, f"cannot run the command: {name}")
        return retryable(ERROR, name)
    try:
        # a command that stopped reading early: its exit decides, by the deadline
        fed = child.feed(stdin_data or b"", deadline)
        code = child.wait(deadline) if fed else None
    except BaseException:
        child.close()
        kill_tree(child.pid)
        child.reap()
        raise
    if code is None:
        kill_tree(child.pid)
        child.reap()
        return retryable(TIMEOUT, "killed at the rule timeout", killed=True)
    if code == 0:
        return accepted()
    return retryable(REFUSED, f"exit {code}")


def deliver(spec: CommandTarget, batch: Sequence[Item], ctx: Context, deadline: float) -> Outcome:
    if spec.format != "json":
        from ..roots import site_packages

        site_packages()  # a mapped format encodes with msgspec (the hook runs with -S)
        from .. import formats

        batch = [Item(i.record, formats.encode(spec.format, i.record, i.line)) for i in batch]
    if spec.input != "args":
        return _run(spec, list(spec.argv), b"".join(i.line + b"\n" for i in batch), deadline)
    outcome = accepted()
    for item in batch:
        arg = item.line.decode("utf-8", "surrogateescape")
        outcome = _run(spec, [*spec.argv, arg], None, deadline)
        if not outcome.accepted:
            break
    return outcome


def close() -> None:
    """Nothing held between runs: each run is its own process."""


def destination(spec: CommandTarget) -> str:
    """The command line, every argument that holds a secret shown as HIDDEN."""
    secret = set(argv_secrets(spec.argv))
    return "command " + " ".join(HIDDEN if i in secret else a for i, a in enumerate(spec.argv))


_SECRET_FLAG = (
    r"^--?[A-Za-z0-9_-]*(token|secret|passw(or)?d|api[-_]?key|auth|credential)[A-Za-z0-9_-]*$"
)


def argv_secrets(argv: list[str]) -> list[int]:
    """Indexes of the arguments holding a literal secret: one the masking finds in it,
    or the value after a flag named like a secret (`--token X`); `${...}` is not one."""
    import re

    flag = re.compile(_SECRET_FLAG, re.I)
    out = []
    for i, arg in enumerate(argv):
        if "${" in arg:
            continue
        after_flag = i > 0 and bool(flag.match(argv[i - 1])) and not arg.startswith("-")
        if after_flag or hide(arg) != arg:
            out.append(i)
    return out


def warnings(spec: CommandTarget, at_least_once: bool) -> list[Advice]:
    out: list[Advice] = []
    if spec.input == "args":
        out.append(
            (
                "input: args puts each record on the command line, which every local user "
                "can read (/proc/<pid>/cmdline, ps) while the command runs, and a record "
                "over 128 KiB cannot be passed at all (parked); input: stdin keeps records "
                "private",
                ["input"],
            )
        )
    for i in argv_secrets(spec.argv):
        out.append(
            (
                f"argv[{i}] holds a literal secret, which every local user can read in the "
                "process list; pass it in `env:` as ${ENV_NAME} and read it in the command",
                ["argv", i],
            )
        )
    return out


def unreachable(spec: CommandTarget, timeout: float) -> str | None:
    import shutil

    exe = spec.argv[0] if "/" in spec.argv[0] else shutil.which(spec.argv[0])
    if not exe or not os.access(exe, os.X_OK) or os.path.isdir(exe):
        return f"{spec.argv[0]} is not an executable here"
    return None


def off_machine(spec: CommandTarget) -> bool:
    return True  # a command may forward what it reads anywhere
