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
              "transcript_size": <bytes in the session file at a session start, else -1>}

`agent` names the adapter whose face read the payload (agents/: `claude-code`, ...);
the dispatcher builds the entry with that adapter's builder. Entries written before
the field existed have none and are read as `claude-code` (DEFAULT_AGENT). Entries
ways writes itself (`WayEvent` from `ways sensors emit`, `WaysRetry`) carry the
default too; no adapter builds them.

The transcript size tells the dispatcher, which may build the entry much later, where
a resumed session's transcript was when this process of the session began.

The header's `event` and the session folder are what the hook's raw scan read
(hook.string_field: top-level keys only). The dispatcher's json parse
(records.parse_payload) agrees with them on every payload it builds, and refuses,
logged content-free, a payload whose top-level object repeats a key (the one case
where the scan's first occurrence and json's last could differ): no record is ever
routed by one reading and built from another.

The hook never parses the payload; the dispatcher does. A writer holds `spool.lock`
for the whole append, so concurrent hooks of one session (parallel tool calls) never
interleave, and the file order is the order `seq` follows. A writer checks the segment
size before writing and truncates back to it when a write fails (full disk), so a
failed append leaves no torn frame. Invariants after a SIGKILL anywhere: every complete
frame is intact; at most the last frame of the newest segment is incomplete, and a
reader treats an incomplete tail as "not yet written". A reader that meets a frame
whose header is not `WS1 <n>` skips to the next `\\nWS1 ` (counted as corrupt).

A new segment is started when the newest one reaches SEGMENT_BYTES.
"""

from . import secure
from .layout import Layout
from .roots import posix

TYPE_CHECKING = False  # type checkers read this as True; `typing` stays off the fast path
if TYPE_CHECKING:
    from collections.abc import Iterator

MAGIC = b"WS1 "
DEFAULT_AGENT = "claude-code"  # entries without an `agent` field came from Claude Code
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
) -> bytes:
    header = (
        '{"event":%s,"agent":%s,"ts_ns":%d,"project":%s,"pid":%d,"ppid":%d,"transcript_size":%d}'
        % (
            json_str(event),
            json_str(agent),
            ts_ns,
            json_str(project),
            posix.getpid(),
            posix.getppid(),
            transcript_size,
        )
    )
    body = header.encode("utf-8", "backslashreplace") + b"\n" + payload
    return MAGIC + str(len(body)).encode() + b"\n" + body + b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = posix.write(fd, view)
        view = view[n:]


def segment_names(spool_dir: str) -> list[str]:
    try:
        return sorted(n for n in posix.listdir(spool_dir) if n.endswith(".seg"))
    except OSError:
        return []


def append(
    session_id: str,
    event: str,
    ts_ns: int,
    project: str,
    payload: bytes,
    transcript_size: int = -1,
    agent: str = DEFAULT_AGENT,
    layout: Layout | None = None,
) -> str:
    """Append one frame to the session's spool under its lock; returns the segment path."""
    import fcntl

    layout = layout or Layout()
    spool_dir, root = layout.spool_dir(session_id), layout.root
    secure.ensure_private_dir(spool_dir, root)
    data = frame(event, ts_ns, project, payload, transcript_size, agent)
    create, append = posix.O_RDWR | posix.O_CREAT, posix.O_WRONLY | posix.O_APPEND | posix.O_CREAT
    for _ in range(5):
        lock = secure.open_private(layout.spool_lock(session_id), create, root)
        fcntl.flock(lock, fcntl.LOCK_EX)
        if posix.fstat(lock).st_nlink:
            break
        # the dispatcher removed the session folder while we waited: start again
        posix.close(lock)
        secure.ensure_private_dir(spool_dir, root)
    try:
        names = segment_names(spool_dir)
        name = names[-1] if names else "0000000001.seg"
        path = spool_dir + "/" + name
        fd = secure.open_private(path, append, root)
        try:
            size = posix.fstat(fd).st_size
            if size >= SEGMENT_BYTES:
                posix.close(fd)
                name = "%010d.seg" % (int(name[:10]) + 1)
                path = spool_dir + "/" + name
                fd = secure.open_private(path, append, root)
                size = posix.fstat(fd).st_size
            try:
                _write_all(fd, data)
            except BaseException:
                try:
                    posix.ftruncate(fd, size)
                except OSError:
                    pass
                raise
        finally:
            posix.close(fd)
    finally:
        posix.close(lock)  # closing releases the flock
    return path


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
    ) -> None:
        self.agent = agent
        self.segment = segment
        self.offset = offset
        self.event = event
        self.ts_ns = ts_ns
        self.project = project
        self.pid = pid
        self.payload = payload
        self.transcript_size = transcript_size


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
    import json

    if body is None:
        return None
    head, _, payload = body.partition(b"\n")
    try:
        h = json.loads(head)
        agent = h.get("agent", DEFAULT_AGENT)
        if not isinstance(agent, str):
            return None
        return Entry(
            segment,
            offset,
            h["event"],
            int(h["ts_ns"]),
            h["project"],
            h.get("pid"),
            payload,
            int(h.get("transcript_size", -1)),
            agent,
        )
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
