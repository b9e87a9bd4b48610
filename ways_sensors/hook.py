"""`ways hook sensors`: the command Claude Code runs on every hook event.

Its stdout is always empty and its exit code always 0: Claude Code reads a hook's
stdout and exit code as instructions (a `{...}` on stdout is a decision object, exit 2
blocks a tool or keeps Claude working). So fd 1 and 2 are pointed at /dev/null first,
every failure is caught and logged content-free to the events log, and the process
leaves through `_exit(0)`.

The fast path, in this order: read stdin; find the event name by scanning the raw
bytes (no JSON library: its import pulls in `re`); map it to sections; stat the sensor
folders and config.yaml and read the index; exit when no enabled rule selects any of
those sections. Only then: find the session id, append one spool entry, and make sure
the session's dispatcher runs. Imports here are `posix`, `sys`, and on the hand-off
`fcntl` and `time`; a test asserts it.
"""

import sys
import time  # already loaded by the interpreter's start-up: free

from .roots import posix

STARTED = time.monotonic()  # the blocking path's shared deadline counts from here

MAX_PAYLOAD = 64 << 20

# hook event -> sections that make the hook hand the event off (SPEC section 4's table,
# plus: SessionEnd yields the replies and queued messages the transcript still holds,
# and SessionStart tells the dispatcher where a resumed transcript's new part begins).
EVENT_SECTIONS = {
    "UserPromptSubmit": ("user_prompt",),
    "PreToolUse": ("tool_call",),
    "PostToolUse": ("tool_result", "queued_message"),
    "PostToolUseFailure": ("tool_result", "queued_message"),
    "Stop": ("assistant_response", "queued_message"),
    "SubagentStart": ("subagent",),
    "SubagentStop": ("subagent", "assistant_response"),
    "SessionStart": ("session_start", "assistant_response", "queued_message"),
    "SessionEnd": ("session_end", "assistant_response", "queued_message"),
    "PreCompact": ("compaction",),
}


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


def sections_for(event: str, data: bytes) -> tuple[str, ...]:
    sections = EVENT_SECTIONS.get(event, ())
    if event == "SessionStart" and string_field(data, b"source") == "compact":
        sections = (*sections, "compaction")
    return sections


def _log(kind: str, **fields) -> None:
    from . import events  # only when there is something to say

    events.log(kind, **fields)


def run() -> None:
    from . import index, roots

    data = read_stdin()
    if data is None:
        _log("hook.payload_too_large", limit=MAX_PAYLOAD)
        return
    event = string_field(data, b"hook_event_name")
    if event is None:
        if data.strip():
            _log("hook.no_event_name", size=len(data))
        return
    sections = sections_for(event, data)
    if not sections:
        return
    project = roots.project_dir()
    idx = index.current(project, index.HOOK_BUDGET)  # a rebuild is bounded (index.py)
    wants_async = [s for s in sections if s in idx.async_sections]
    wants_blocking = [s for s in sections if s in idx.blocking_sections]
    if not wants_async and not wants_blocking:
        if event == "SessionEnd" and _has_spool(data):
            wants_async = ["session_end"]  # tell the dispatcher: drain, then clean up
        else:
            _resume_pending(event, data)
            return

    ts_ns = time.time_ns()
    from . import spool

    session_id = string_field(data, b"session_id")
    if not spool.valid_session_id(session_id):
        _log("hook.bad_session_id", hook_event=event)
        return
    if wants_async:
        size = _transcript_size(data) if event == "SessionStart" else -1
        spool.append(session_id, event, ts_ns, project, data, size)
        from . import launch

        launch.ensure_dispatcher(session_id)
        if event == "SessionStart":
            _resume_pending(event, data)
    if wants_blocking:
        from . import blocking

        blocking.run(session_id, event, ts_ns, project, data, wants_blocking, STARTED)


def _transcript_size(data: bytes) -> int:
    """Where the transcript ends as this session (re)starts: the dispatcher may build the
    entry later, when the transcript has grown."""
    path = string_field(data, b"transcript_path")
    if not path:
        return -1
    try:
        return posix.stat(path).st_size
    except OSError:
        return 0


def _has_spool(data: bytes) -> bool:
    from . import roots, spool

    sid = string_field(data, b"session_id")
    if not spool.valid_session_id(sid):
        return False
    try:
        posix.stat(roots.state_root() + "/sessions/" + sid + "/spool")
        return True
    except OSError:
        return False


def _resume_pending(event: str, data: bytes) -> None:
    """Restart dispatchers that exited owing records: this session's at its next event,
    every session's at any session start (a consumer that was down gets its records)."""
    from . import roots

    folder = roots.state_root() + "/pending"
    if event == "SessionStart":
        try:
            owed = posix.listdir(folder)
        except OSError:
            return
    else:
        sid = string_field(data, b"session_id")
        if not sid or "/" in sid or sid.startswith("."):
            return
        try:
            posix.stat(folder + "/" + sid)
        except OSError:
            return
        owed = [sid]
    from . import launch, spool

    for sid in owed:
        if spool.valid_session_id(sid):
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


def main() -> None:
    """Run the hook and leave with status 0, whatever happened."""
    _silence()
    try:
        run()
    except BaseException as exc:  # the hook never fails a tool call
        try:
            _log("hook.error", error=type(exc).__name__)
        except BaseException:
            pass
    posix._exit(0)


if __name__ == "__main__":  # pragma: no cover - entered through the launcher or the CLI
    main()
    sys.exit(0)
