"""`ways hook sensors [--agent NAME] [--event NAME]`: the command an agent runs on every hook event.

Its stdout is always empty and its exit code always 0: agents read a hook's stdout and
exit code as instructions (for Claude Code a `{...}` on stdout is a decision object,
exit 2 blocks a tool or keeps it working). So fd 1 and 2 are pointed at /dev/null
first, every failure (an unknown agent or argument included) is caught and logged
content-free to the events log, and the process leaves through `_exit(0)`.

One payload, one reading: the hook routes an event by the top-level strings its scan
reads (`string_field`), the dispatcher and the blocking path build it from json's parse
(records.parse_payload), and the two agree on every payload that is built (tests/
test_inputs.py checks the scan against json on generated payloads, end to end).

What differs between agents (payload field names, event names and their sections, the
project variable) is the agent's face, its entry in index.AGENTS (default:
claude-code), read with the compiled rule index in one import. `--event NAME` names the
event for payloads that carry none (Copilot CLI's camelCase hooks); an event name in
the payload wins. A Cursor payload (it has `cursor_version`, and a camelCase event)
arriving on Claude Code's entry, which Cursor runs from Claude Code's settings, is read
through Cursor's face and spooled as Cursor's.

The fast path, in this order: read stdin; find the event name by scanning the raw
bytes (no JSON library: its import pulls in `re`); map it to sections; stat the sensor
folders and config.yaml and read the index; exit when no enabled rule selects any of
those sections (a blocking rule's `where`, when the payload decides it: prefilter.py).
Only then: find the session id, append one spool entry (naming the agent; with the
client's $TRACEPARENT), and make sure the session's dispatcher runs. Imports here are
`posix`, `sys`, roots.py and index.py; spool.py, `fcntl` and launch.py only on the
hand-off; a test asserts it. Every module adds to the hook's start, and the event no
rule wants is the common case (bench/RESULTS.md, Hook latency).

`launched` is what the launcher (_launch.py, the file `ways reconcile` wires) calls:
Python compiles a script on every run, but loads a module's cached bytecode, so the
launcher is three lines and its logic lives here.
"""

import sys
import time  # already loaded by the interpreter's start-up: free

from .index import MAX_PAYLOAD
from .roots import posix

STARTED = time.monotonic()  # the blocking path's shared deadline counts from here

# string_field's bound: quotes stepped over before giving up (a real payload's routing
# keys come long before the bound; a hostile one is cut off here, then reads as absent)
SCAN_STEPS = 100_000
MAX_TRACEPARENT = 256  # bytes of $TRACEPARENT carried; the dispatcher validates it
# the gaps between strings that hold no bracket, as the agents write them: skip the count
_NO_BRACKETS = frozenset((b"", b":", b",", b": ", b", ", b":\n", b",\n"))


_ESCAPES = {34: '"', 92: "\\", 47: "/", 98: "\b", 102: "\f", 110: "\n", 114: "\r", 116: "\t"}
_HEX = frozenset(b"0123456789abcdefABCDEF")


def _unescape(raw: bytes) -> str | None:
    """A JSON string's body as json decodes it (a spooled payload's bytes are decoded
    with surrogatepass, as records.parse_payload does); None when it is not valid."""
    try:
        if 92 not in raw:
            return raw.decode("utf-8", "surrogatepass")
        parts = []
        i = 0
        n = len(raw)
        while i < n:
            j = raw.find(b"\\", i)
            if j < 0:
                parts.append(raw[i:].decode("utf-8", "surrogatepass"))
                break
            parts.append(raw[i:j].decode("utf-8", "surrogatepass"))
            c = raw[j + 1] if j + 1 < n else -1
            if c == 117:  # \uXXXX, a surrogate pair of two escapes combined, as json does
                hexd = raw[j + 2 : j + 6]
                if len(hexd) != 4 or not _HEX.issuperset(hexd):
                    return None
                cp = int(hexd, 16)
                i = j + 6
                if 0xD800 <= cp <= 0xDBFF and raw[i : i + 2] == b"\\u":
                    low = raw[i + 2 : i + 6]
                    if len(low) == 4 and _HEX.issuperset(low):
                        lo = int(low, 16)
                        if 0xDC00 <= lo <= 0xDFFF:
                            cp = 0x10000 + (((cp - 0xD800) << 10) | (lo - 0xDC00))
                            i += 6
                parts.append(chr(cp))
            elif c in _ESCAPES:
                parts.append(_ESCAPES[c])
                i = j + 2
            else:
                return None
        return "".join(parts)
    except UnicodeDecodeError:
        return None


def string_field(data: bytes, name: bytes) -> str | None:
    """The string value of the top-level key `name` in raw JSON bytes, or None.

    It reads what json reads, or nothing: the key counts only at depth 1 of the payload
    object, never inside a nested object or array, nor as text inside a string; the
    value's escapes are decoded as json decodes them. The key must be spelled as is (an
    escaped spelling reads as absent), and the first top-level occurrence is taken,
    since a payload whose top-level object repeats a key is refused by the dispatcher's
    parse (records.parse_payload logs `payload.repeated_key`), where json would take the
    last. None also when the value is not a string, or past SCAN_STEPS. What reads as
    absent is not routed (the hook logs why), never routed as json reads it otherwise.

    Cost: one C-speed find for the key, then one step per quote between the start and
    the key (brackets between strings, when any, are counted with bytes.count); the
    agents put the routing keys within the first few hundred bytes.
    """
    key = b'"' + name + b'"'
    find = data.find
    n = len(data)
    depth = 0
    pos = 0  # everything before `pos` is read, and `pos` is outside any string
    steps = SCAN_STEPS
    while True:
        i = find(key, pos)
        if i < 0:
            return None
        while True:  # walk the strings up to the one that holds or opens the candidate
            q = find(b'"', pos)  # <= i: data[i] is a quote
            gap = data[pos:q]
            if gap not in _NO_BRACKETS:
                depth += gap.count(b"{") + gap.count(b"[") - gap.count(b"}") - gap.count(b"]")
            end = q
            while True:  # the closing quote: one preceded by an even run of backslashes
                steps -= 1
                end = find(b'"', end + 1)
                if end < 0 or steps < 0:
                    return None
                if data[end - 1] != 92:
                    break
                b = end - 2
                while data[b] == 92:  # stops by q at the latest (a quote)
                    b -= 1
                if (end - 1 - b) & 1 == 0:
                    break
            pos = end + 1
            if end >= i:
                break
        if q != i or depth != 1:
            continue  # text inside a string, or a key of a nested object
        j = pos
        while j < n and data[j] in b" \t\r\n":
            j += 1
        if j >= n or data[j] != 58:  # ':' -- not a key: a string value in the object
            continue
        j += 1
        while j < n and data[j] in b" \t\r\n":
            j += 1
        if j >= n or data[j] != 34:  # '"'
            return None  # the key's value is not a string
        end = j
        while True:
            end = find(b'"', end + 1)
            if end < 0:
                return None
            b = end - 1
            while data[b] == 92:
                b -= 1
            if (end - 1 - b) & 1 == 0:
                return _unescape(data[j + 1 : end])


def read_stdin() -> bytes | None:
    """All of stdin; None (after draining it) when it exceeds MAX_PAYLOAD."""
    chunks: list[bytes] = []
    size = 0
    too_big = False
    while True:
        try:
            chunk = posix.read(0, 1 << 16)  # more, and Python maps (and unmaps) memory
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
    from .state import events  # only when there is something to say

    events.log(kind, **fields)


def parse_args(args: list[str]) -> dict[str, str] | None:
    """`--agent NAME` and `--event NAME` (or `--x=NAME`), each at most once, in any
    order: {"agent": ..., "event": ...} with what was given; None for anything else."""
    out: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        key, eq, value = arg.partition("=")
        if key not in ("--agent", "--event") or key[2:] in out:
            return None
        if not eq:
            if i + 1 >= len(args):
                return None
            i += 1
            value = args[i]
        out[key[2:]] = value
        i += 1
    return out


def run(args: list[str]) -> None:
    from . import index  # every agent's face, and the compiled rule index

    data = read_stdin()  # first: an agent may fail a hook that leaves its input unread
    if data is None:
        _log("hook.payload_too_large", limit=MAX_PAYLOAD)
        return
    parsed = parse_args(args)
    if parsed is None:
        _log("hook.bad_arguments", count=len(args))
        return
    name = parsed.get("agent", index.DEFAULT)

    def field(key: bytes) -> str | None:
        return string_field(data, key)

    face = index.AGENTS.get(name)
    if face is None:
        shown = name if len(name) <= 40 and name.replace("-", "").isalnum() else "?"
        _log("hook.unknown_agent", agent=shown)
        return
    event = field(face.EVENT_FIELD)
    # Cursor runs Claude Code's hooks with its own payloads: a camelCase event (Claude
    # Code's never are) and `cursor_version`, looked for only then (a scan of the payload)
    if name == index.DEFAULT and event and event[:1].islower() and field(b"cursor_version"):
        face = index.AGENTS["cursor"]
        event = field(face.EVENT_FIELD)

    def session() -> str | None:
        """The session id; a face may name a second key (Copilot CLI's camelCase)."""
        alt = face.ALT_SESSION_FIELD
        return field(face.SESSION_FIELD) or (field(alt) if alt else None)

    event = event or parsed.get("event")
    if event is None:
        if data.strip():
            _log("hook.no_event_name", size=len(data))
        return
    sections = face.sections_for(event, field)
    if not sections:
        return
    from . import roots

    project = roots.project_dir(face.PROJECT_ENV)
    idx, key = index.fresh(project)
    if idx is None:  # the slow half, only when the key changed; bounded (indexbuild.py)
        from .config import indexbuild

        idx = indexbuild.rebuild(project, key, index.HOOK_BUDGET)
    wants_async = [s for s in sections if s in idx.async_sections]
    wants_blocking = [s for s in sections if s in idx.blocking_sections]
    if wants_blocking:  # decided on the payload before building anything (prefilter.py)
        from . import prefilter

        copies = face.VERBATIM.get(event)
        if not prefilter.may_match(idx.filters, copies, sections, field):
            wants_blocking = []
    if not wants_async and not wants_blocking:
        if event == face.END_EVENT and _has_spool(session()):
            wants_async = ["session_end"]  # tell the dispatcher: drain, then clean up
        else:
            _resume_pending(event == face.START_EVENT, session())
            return

    ts_ns = time.time_ns()
    from .state import spool

    session_id = session()
    if not roots.valid_session_id(session_id):
        _log("hook.bad_session_id", hook_event=event)
        return
    starts = event == face.START_EVENT
    if wants_async:
        # the session file's size, where the builder starts reading (at a session
        # start) or looks what followed the event (the face's SIZE_EVENTS)
        measure = starts or event in face.SIZE_EVENTS
        path = field(face.TRANSCRIPT_FIELD) if measure and face.TRANSCRIPT_FIELD else None
        size = spool.transcript_size(path) if measure else -1
        tp = posix.environ.get(b"TRACEPARENT")  # the client's trace (traces/context.py)
        trace = tp[:MAX_TRACEPARENT].decode("ascii", "replace") if tp else ""
        spool.append(session_id, event, ts_ns, project, data, size, face.NAME, trace)
        from .dispatch import launch

        launch.ensure_dispatcher(session_id)
        if starts:
            _resume_pending(True, session_id)
    if wants_blocking:
        from .dispatch import blocking

        job = (session_id, event, ts_ns, project, data, wants_blocking, STARTED)
        blocking.run(*job, agent=face.NAME, idx=idx)  # the index decided on, not re-read


def _has_spool(sid: str | None) -> bool:
    from .state.layout import Layout, valid_session_id

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
    from . import roots

    if session_start:
        from .dispatch import launch

        launch.ensure_resumer()
        return
    if not roots.valid_session_id(sid):
        return
    try:
        posix.stat(pending_marker(sid))
    except OSError:
        return  # the common case: imports nothing more (launch brings secure.py)
    from .dispatch import launch

    launch.ensure_dispatcher(sid)


def pending_marker(sid: str) -> str:
    """layout.Layout().pending_marker(sid), spelled here: this stat is on the path of every
    event no rule wants, and importing layout.py there would cost more than the whole
    hand-off decision (bench/RESULTS.md, Hook latency). tests/test_hook.py checks that
    the two spellings agree."""
    from . import roots

    return (roots.state_root().rstrip("/") or "/") + "/pending/" + sid


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


def launched(argv: list[str]) -> None:
    """The launcher's entry: `hook sensors ...` runs the hook (never returns: it leaves
    through _exit(0)); for any other command it processes site (the launcher runs with
    -S) and returns, and the launcher runs the CLI (so this module never imports it)."""
    if argv[:2] == ["hook", "sensors"]:  # `--agent NAME` and the like: the hook's own
        main(argv[2:])
    from . import roots

    roots.site_packages()  # the launcher runs with -S


if __name__ == "__main__":  # pragma: no cover - entered through the launcher or the CLI
    main(sys.argv[1:])
    sys.exit(0)
