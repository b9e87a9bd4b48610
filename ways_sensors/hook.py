"""`ways hook sensors [--agent NAME]`: the command a coding agent runs on every hook event.

Its stdout is always empty and its exit code always 0: agents read a hook's stdout and
exit code as instructions (for Claude Code a `{...}` on stdout is a decision object,
exit 2 blocks a tool or keeps it working). So fd 1 and 2 are pointed at /dev/null
first, every failure (an unknown agent or argument included) is caught and logged
content-free to the events log, and the process leaves through `_exit(0)`.

What differs between agents (payload field names, event names and their sections, the
project variable) is the agent's face, the package `agents/<name>/` (default:
claude-code), through the registry in agents/__init__.py.
The fast path, in this order: read stdin; find the event name by scanning the raw
bytes (no JSON library: its import pulls in `re`); map it to sections; stat the sensor
folders and config.yaml and read the index; exit when no enabled rule selects any of
those sections. Only then: find the session id, append one spool entry (naming the
agent), and make sure the session's dispatcher runs. Imports here are `posix`, `sys`,
the registry and the face, layout.py (the state root's paths), and on the hand-off
`fcntl` and `time`; a test asserts it.
"""

import sys
import time  # already loaded by the interpreter's start-up: free

from .roots import posix

STARTED = time.monotonic()  # the blocking path's shared deadline counts from here

MAX_PAYLOAD = 64 << 20


def string_field(data: bytes, name: bytes) -> str | None:
    """The first string value of key `name` in raw JSON bytes, or None.

    A quoted token followed by `:` can only be a key (quotes inside JSON strings are
    escaped), so this never mistakes text for a key. Values with escapes are refused:
    event names and session ids never need them.
    """
    key = b'"' + name + b'"'
    n = len(data)
    i = data.find(key)
    while i >= 0:
        j = i + len(key)
        while j < n and data[j] in b" \t\r\n":
            j += 1
        if j < n and data[j] == 58:  # ':'
            j += 1
            while j < n and data[j] in b" \t\r\n":
                j += 1
            if j < n and data[j] == 34:  # '"'
                end = data.find(b'"', j + 1)
                if end < 0:
                    return None
                value = data[j + 1 : end]
                if b"\\" in value:
                    return None
                try:
                    return value.decode("utf-8")
                except UnicodeDecodeError:
                    return None
            return None
        i = data.find(key, i + 1)
    return None


def read_stdin() -> bytes | None:
    """All of stdin; None (after draining it) when it exceeds MAX_PAYLOAD."""
    chunks = []
    size = 0
    too_big = False
    while True:
        try:
            chunk = posix.read(0, 1 << 20)
        except InterruptedError:
            continue
        except OSError:
            break
        if not chunk:
            break
        if too_big:
            continue
        size += len(chunk)
        if size > MAX_PAYLOAD:
            too_big = True
            chunks = []
            continue
        chunks.append(chunk)
    return None if too_big else b"".join(chunks)


def _log(kind: str, **fields: object) -> None:
    from . import events  # only when there is something to say

    events.log(kind, **fields)


def agent_name(args: list[str]) -> str | None:
    """The agent the arguments name: none (the default), `--agent NAME` or
    `--agent=NAME`; None for anything else."""
    if not args:
        from .agents import DEFAULT

        return DEFAULT
    if len(args) == 2 and args[0] == "--agent":
        return args[1]
    if len(args) == 1 and args[0].startswith("--agent="):
        return args[0][8:]
    return None


def run(args: list[str]) -> None:
    from . import agents

    data = read_stdin()  # first: an agent may fail a hook that leaves its input unread
    if data is None:
        _log("hook.payload_too_large", limit=MAX_PAYLOAD)
        return
    name = agent_name(args)
    if name is None:
        _log("hook.bad_arguments", count=len(args))
        return
    face = agents.face(name)
    if face is None:
        shown = name if len(name) <= 40 and name.replace("-", "").isalnum() else "?"
        _log("hook.unknown_agent", agent=shown)
        return

    def field(key: bytes) -> str | None:
        return string_field(data, key)

    event = field(face.EVENT_FIELD)
    if event is None:
        if data.strip():
            _log("hook.no_event_name", size=len(data))
        return
    sections = face.sections_for(event, field)
    if not sections:
        return
    from . import index, roots

    project = roots.project_dir(face.PROJECT_ENV)
    idx = index.current(project, index.HOOK_BUDGET)  # a rebuild is bounded (index.py)
    wants_async = [s for s in sections if s in idx.async_sections]
    wants_blocking = [s for s in sections if s in idx.blocking_sections]
    if not wants_async and not wants_blocking:
        if event == face.END_EVENT and _has_spool(field(face.SESSION_FIELD)):
            wants_async = ["session_end"]  # tell the dispatcher: drain, then clean up
        else:
            _resume_pending(event == face.START_EVENT, field(face.SESSION_FIELD))
            return

    ts_ns = time.time_ns()
    from . import spool
    from .layout import valid_session_id

    session_id = field(face.SESSION_FIELD)
    if not valid_session_id(session_id):
        _log("hook.bad_session_id", hook_event=event)
        return
    starts = event == face.START_EVENT
    if wants_async:
        path = field(face.TRANSCRIPT_FIELD) if starts and face.TRANSCRIPT_FIELD else None
        size = _transcript_size(path) if starts else -1
        spool.append(session_id, event, ts_ns, project, data, size, face.NAME)
        from . import launch

        launch.ensure_dispatcher(session_id)
        if starts:
            _resume_pending(True, session_id)
    if wants_blocking:
        from . import blocking

        blocking.run(
            session_id, event, ts_ns, project, data, wants_blocking, STARTED, agent=face.NAME
        )


def _transcript_size(path: str | None) -> int:
    """Where the transcript ends as this session (re)starts: the dispatcher may build the
    entry later, when the transcript has grown."""
    if not path:
        return -1
    try:
        return posix.stat(path).st_size
    except OSError:
        return 0


def _has_spool(sid: str | None) -> bool:
    from .layout import Layout, valid_session_id

    if not valid_session_id(sid):
        return False
    try:
        posix.stat(Layout().spool_dir(sid))
        return True
    except OSError:
        return False


def _resume_pending(session_start: bool, sid: str | None) -> None:
    """Restart dispatchers that exited owing records: this session's at its next event;
    at any session start, the other sessions' through the one detached resumer (at most
    a few dispatchers at a time, with backoff per consumer: resume.py), so a start never
    starts a herd, nor waits for one."""
    from . import launch
    from .layout import Layout, valid_session_id

    if session_start:
        launch.ensure_resumer()
        return
    if not valid_session_id(sid):
        return
    try:
        posix.stat(Layout().pending_marker(sid))
    except OSError:
        return
    launch.ensure_dispatcher(sid)


def _silence() -> None:
    """Point stdout and stderr at /dev/null: nothing we or a child do can reach them."""
    try:
        fd = posix.open("/dev/null", posix.O_RDWR)
        posix.dup2(fd, 1)
        posix.dup2(fd, 2)
        if fd > 2:
            posix.close(fd)
    except OSError:
        pass


def main(args: list[str] | None = None) -> None:
    """Run the hook (`args`: what follows `hook sensors`) and leave with status 0,
    whatever happened."""
    _silence()
    try:
        run(args or [])
    except BaseException as exc:  # the hook never fails a tool call
        try:
            _log("hook.error", error=type(exc).__name__)
        except BaseException:
            pass
    posix._exit(0)


if __name__ == "__main__":  # pragma: no cover - entered through the launcher or the CLI
    main(sys.argv[1:])
    sys.exit(0)
