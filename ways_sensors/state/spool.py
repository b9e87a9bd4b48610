"""The per-session spool: where the hook hands events to the dispatcher.

Files, under `<state>/sessions/<session_id>/` (folders 0700, files 0600; layout.py
names them):

    spool.lock            flock'd (exclusive) by every writer for one append
    spool/<n>.seg         append-only segments, n = 0000000001, 0000000002, ...

Who writes: the hook (and `ways sensors emit`, and the blocking path re-spooling a
failed dispatch) appends; nobody rewrites. Who deletes: the dispatcher, a whole
segment once every rule's cursor has passed it (never the newest one).

A segment is a run of frames:

    WS1 <body length> \n <body> \n

    body = <header JSON object, one line> \n <raw payload bytes, as received>

    header = {"event": "<hook event name>", "agent": "<agent name>",
              "ts_ns": <hook clock, ns since epoch>, "project": "<project dir>",
              "pid": <hook pid>, "ppid": <its parent: the client, as reconcile wires it>,
              "transcript_size": <bytes in the session file at a session start
                                  or the face's SIZE_EVENTS, else -1>,
              "traceparent": <$TRACEPARENT, when set: the dispatcher checks it>}

`agent` names the adapter whose face read the payload (agents/: `claude-code`, ...);
the dispatcher builds the entry with that adapter's builder. Entries written before
the field existed have none and are read as `claude-code` (DEFAULT_AGENT). Entries
ways writes itself (`WayEvent` from `ways sensors emit`, RETRY_EVENT from the blocking
path) carry the default too; no adapter builds them.

The transcript size tells the dispatcher, which may build the entry much later, where
a resumed session's transcript was when this process of the session began, and, at the
events that read it (Claude Code's turn events), how far the builder reads: the file as
it stood when the hook ran, not a later turn the client wrote since.

The header's `event` and the session folder are what the hook's raw scan read
(hook.string_field: top-level keys only). The dispatcher's json parse
(records.parse_payload) agrees with them on every payload it builds, and refuses,
logged content-free, a payload whose top-level object repeats a key (the one case
where the scan's first occurrence and json's last could differ): no record is ever
routed by one reading and built from another.

`spool.lock` holds the commit record, one line the last writer wrote after its append:

    <segment name> <end of its frame, bytes> \n

The hook never parses the payload; the dispatcher does. A writer holds `spool.lock`
for the whole append, so concurrent hooks of one session (parallel tool calls) never
interleave, and the file order is the order `seq` follows. A writer checks the segment
size before writing and truncates back to it when a write fails (full disk), so a
failed append leaves no torn frame.

A writer SIGKILLed in the middle of its write leaves a torn frame: a header promising
more bytes than follow. Nothing is ever written after one. The next writer, holding
the lock, checks that the newest segment ends where the commit record says (else it
walks the few frame headers after it, WALK at most); a segment that does not end on a
frame boundary is sealed: the writer starts the next segment instead of appending, so
the torn frame is the last bytes of a segment that never grows again. When no writer
comes, the dispatcher seals it (`seal_torn_tail`): a tail that stays incomplete while
it holds the lock has no live writer. A reader skips the tail of a sealed segment that
holds no complete frame, counts it and logs it content-free (dispatcher.py), and
delivers everything after. So after a SIGKILL anywhere: every complete frame is intact
and delivered; a torn frame is the tail of its segment, read as "not yet written" until
that segment is sealed. Frames are never rewritten and segments never truncated, so a
reader never sees a torn frame's bytes mixed with a later frame's. A reader that meets
a frame whose header is not `WS1 <n>` skips to the next `\\nWS1 ` (counted as corrupt).

A new segment is started when the newest one reaches SEGMENT_BYTES.
"""

from ..index import DEFAULT
from ..roots import posix
from . import secure
from .layout import Layout

TYPE_CHECKING = False  # type checkers read this as True; `typing` stays off the fast path
if TYPE_CHECKING:
    from collections.abc import Iterator

MAGIC = b"WS1 "
# the event of a failed blocking at_least_once dispatch the hook spools for the
# dispatcher to finish (dispatch/blocking.py writes it, dispatch/build.py reads it)
RETRY_EVENT = "WaysRetry"
FIRST_SEGMENT = "0000000001.seg"
WALK = 16  # frame headers a writer reads past the commit record before sealing instead
DEFAULT_AGENT = DEFAULT  # entries without an `agent` field came from Claude Code
SEGMENT_BYTES = 4 << 20


def json_str(s: str) -> str:
    """A JSON string literal, without the json module (its import pulls in `re`)."""
    out = s.replace("\\", "\\\\").replace('"', '\\"')
    if any(ord(c) < 0x20 for c in out):
        out = "".join(c if ord(c) >= 0x20 else "\\u%04x" % ord(c) for c in out)
    return '"' + out + '"'


def frame(
    event: str,
    ts_ns: int,
    project: str,
    payload: bytes,
    transcript_size: int = -1,
    agent: str = DEFAULT_AGENT,
    traceparent: str = "",
) -> bytes:
    header = (
        '{"event":%s,"agent":%s,"ts_ns":%d,"project":%s,"pid":%d,"ppid":%d,"transcript_size":%d%s}'
        % (
            json_str(event),
            json_str(agent),
            ts_ns,
            json_str(project),
            posix.getpid(),
            posix.getppid(),
            transcript_size,
            ',"traceparent":' + json_str(traceparent) if traceparent else "",
        )
    )
    body = header.encode("utf-8", "backslashreplace") + b"\n" + payload
    return MAGIC + str(len(body)).encode() + b"\n" + body + b"\n"


def segment_names(spool_dir: str) -> list[str]:
    try:
        return sorted(n for n in posix.listdir(spool_dir) if n.endswith(".seg"))
    except OSError:
        return []


def _frame_end(fd: int, pos: int, size: int) -> int:
    """Where the frame at `pos` ends, or -1 when no complete frame starts there."""
    head = posix.pread(fd, 32, pos)
    nl = head.find(b"\n")
    if not head.startswith(MAGIC) or nl < 0:
        return -1
    try:
        length = int(head[len(MAGIC) : nl])
    except ValueError:
        return -1
    end = pos + nl + 1 + length + 1
    if length < 0 or end > size or posix.pread(fd, 1, end - 1) != b"\n":
        return -1
    return end


def ends_on_a_frame(fd: int, size: int, lock: int, name: str) -> bool:
    """True when segment `name` (open as `fd`, `size` bytes) ends where a frame ends: at
    the commit record's end, or at most WALK complete frames after it (a writer killed
    after its write but before its record). False for a torn tail, or when unsure."""
    try:
        line = posix.pread(lock, 64, 0).split(b"\n", 1)[0].split(b" ")
        pos = int(line[1]) if len(line) == 2 and line[0] == name.encode() else 0
    except (OSError, ValueError):
        pos = 0
    if pos > size:
        pos = 0
    try:
        for _ in range(WALK):
            if pos == size:
                return True
            pos = _frame_end(fd, pos, size)
            if pos < 0:
                return False
    except OSError:
        return False
    return pos == size


def _commit(lock: int, name: str, end: int) -> None:
    """Record where the last complete frame ends (the module docstring's commit record)."""
    try:
        posix.pwrite(lock, b"%s %d\n" % (name.encode(), end), 0)
    except OSError:
        pass  # the next writer walks the frames instead


def _open_segment(spool_dir: str, name: str, root: str = "") -> int:
    flags = posix.O_RDWR | posix.O_APPEND | posix.O_CREAT
    return secure.open_private(spool_dir + "/" + name, flags, root)


def next_segment(name: str) -> str:
    return "%010d.seg" % (int(name[:10]) + 1)


def _lock(layout: Layout, session_id: str, spool_dir: str) -> int:
    """The session's spool.lock, open and flock'd (exclusive)."""
    import fcntl

    root = layout.root
    for _ in range(5):
        lock = secure.open_private(
            layout.spool_lock(session_id), posix.O_RDWR | posix.O_CREAT, root
        )
        fcntl.flock(lock, fcntl.LOCK_EX)
        if posix.fstat(lock).st_nlink:
            break
        # the dispatcher removed the session folder while we waited: start again
        posix.close(lock)
        secure.ensure_private_dir(spool_dir, root)
    return lock


def transcript_size(path: str | None) -> int:
    """Where the session file ends as the hook hands an event off (recorded in its entry):
    the dispatcher may build the entry later, when the file has grown."""
    if not path:
        return -1
    try:
        return posix.stat(path).st_size
    except (OSError, ValueError):  # ValueError: a NUL in the path, which nothing can open
        return 0


def append(
    session_id: str,
    event: str,
    ts_ns: int,
    project: str,
    payload: bytes,
    transcript_size: int = -1,
    agent: str = DEFAULT_AGENT,
    traceparent: str = "",
    layout: Layout | None = None,
) -> str:
    """Append one frame to the session's spool under its lock; returns the segment path."""
    layout = layout or Layout()
    spool_dir, root = layout.spool_dir(session_id), layout.root
    secure.ensure_private_dir(spool_dir, root)
    data = frame(event, ts_ns, project, payload, transcript_size, agent, traceparent)
    lock = _lock(layout, session_id, spool_dir)
    try:
        names = segment_names(spool_dir)
        name = names[-1] if names else FIRST_SEGMENT
        fd = _open_segment(spool_dir, name, root)
        try:
            size = posix.fstat(fd).st_size
            if size >= SEGMENT_BYTES or not ends_on_a_frame(fd, size, lock, name):
                posix.close(fd)  # full, or sealed: its last frame is torn
                name = next_segment(name)
                fd = _open_segment(spool_dir, name, root)
                size = posix.fstat(fd).st_size
            try:
                secure.write_all(fd, data)
            except BaseException:
                try:
                    posix.ftruncate(fd, size)
                except OSError:
                    pass
                raise
            _commit(lock, name, size + len(data))
        finally:
            posix.close(fd)
    finally:
        posix.close(lock)  # closing releases the flock
    return spool_dir + "/" + name


def seal_torn_tail(session_id: str, name: str, size: int, layout: Layout | None = None) -> bool:
    """Seal segment `name` when it is still the newest and still `size` bytes long: the
    caller saw it end in an incomplete frame, and no writer is mid-append while we hold
    the lock, so that frame's writer died. The next segment is started (empty) and writers
    go on there; True when sealed. Called by the dispatcher, never the hook."""
    layout = layout or Layout()
    spool_dir = layout.spool_dir(session_id)
    lock = _lock(layout, session_id, spool_dir)
    try:
        names = segment_names(spool_dir)
        if not names or names[-1] != name:
            return False
        try:
            if posix.stat(spool_dir + "/" + name).st_size != size:
                return False
        except OSError:
            return False
        nxt = next_segment(name)
        posix.close(_open_segment(spool_dir, nxt))
        _commit(lock, nxt, 0)
        return True
    finally:
        posix.close(lock)


# --- reading (dispatcher, tests, `ways status`) ------------------------------------------


class Entry:
    """One spool frame: where it sits and what the hook recorded."""

    __slots__ = (
        "agent",
        "event",
        "offset",
        "payload",
        "pid",
        "project",
        "segment",
        "traceparent",
        "transcript_size",
        "ts_ns",
    )

    def __init__(
        self,
        segment: str,
        offset: int,
        event: str,
        ts_ns: int,
        project: str,
        pid: int | None,
        payload: bytes,
        transcript_size: int = -1,
        agent: str = DEFAULT_AGENT,
        traceparent: str = "",
    ) -> None:
        self.agent, self.traceparent = agent, traceparent  # $TRACEPARENT, unchecked
        self.segment, self.offset, self.event = segment, offset, event
        self.ts_ns, self.project, self.pid = ts_ns, project, pid
        self.payload, self.transcript_size = payload, transcript_size


def scan_frames(
    data: bytes, magic: bytes = MAGIC, start: int = 0
) -> "Iterator[tuple[int, int, bytes | None]]":
    """Yield (offset, end, body | None) for each complete frame of `data` from `start`.

    None marks a corrupt stretch that was skipped up to the next frame start. Stops
    before an incomplete tail, which a reader treats as not yet written.
    """
    pos = start
    n = len(data)
    while pos < n:
        body = None
        if data.startswith(magic, pos):
            nl = data.find(b"\n", pos)
            if nl < 0:
                return
            try:
                length = int(data[pos + len(magic) : nl])
            except ValueError:
                length = -1
            end = nl + 1 + length + 1
            if length >= 0:
                if end > n:
                    return  # incomplete tail: not yet written
                if data[end - 1 : end] == b"\n":
                    yield pos, end, data[nl + 1 : end - 1]
                    pos = end
                    continue
        nxt = data.find(b"\n" + magic, pos)
        if nxt < 0:
            return
        yield pos, nxt + 1, body
        pos = nxt + 1


def parse_entry(body: bytes | None, segment: str = "", offset: int = 0) -> Entry | None:
    """A spool frame's body as an Entry; None when its header is unreadable."""
    from .. import jsoncore

    if body is None:
        return None
    head, _, payload = body.partition(b"\n")
    try:
        h = jsoncore.loads(head)
        agent = h.get("agent", DEFAULT_AGENT)
        if not isinstance(agent, str):
            return None
        size, trace = int(h.get("transcript_size", -1)), str(h.get("traceparent") or "")
        fields = (h["event"], int(h["ts_ns"]), h["project"], h.get("pid"), payload)
        return Entry(segment, offset, *fields, size, agent, trace)  # trace: context.py checks
    except (ValueError, KeyError, TypeError):
        return None


def read_all(session_id: str, layout: Layout | None = None) -> list[Entry]:
    """Every intact entry of a session's spool, in order."""
    spool_dir = (layout or Layout()).spool_dir(session_id)
    out = []
    for name in segment_names(spool_dir):
        with open(secure.open_private(spool_dir + "/" + name, posix.O_RDONLY), "rb") as f:
            data = f.read()
        for off, _, body in scan_frames(data):
            entry = parse_entry(body, name, off)
            if entry is not None:
                out.append(entry)
    return out
