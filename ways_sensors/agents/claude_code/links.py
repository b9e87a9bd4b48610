"""Which session a resumed, forked or cleared session continues: `previous_session_id`.

What Claude Code 2.1.332 tells, and where (seen on the real client):

* `resume` (`--resume`, `--continue`, `/resume`): the session goes on in its own
  transcript, whose lines before this start carry the id of the session they belong
  to (in 2.1.332 the same id: a resume keeps it). Read from the bytes the transcript
  held when the hook ran (the spool entry's transcript size), so lines the resumed
  process writes later never count.
* `fork` (`--fork-session`): a new transcript whose copied lines keep the original's
  `requestSessionId`; 2.1.332 writes them with the first reply, after SessionStart, so
  the field is null unless they are already there.
* `clear` (`/clear`): the new session's start names nothing of the old one, but the
  old session's SessionEnd (`reason: clear`) came just before, from the same client,
  for the same transcript folder. The old session's builder leaves a note (below);
  the new one's takes it, or, when the old session's dispatcher has not built that
  SessionEnd yet, finds it still in the old session's spool (read first: a session
  folder is removed only after its builder wrote the note, so one of the two holds it).

Notes, under the state root (folder 0700, files 0600):

    links/<digest of the transcript folder>.json   {"session_id", "ts_ns"}

written at a SessionEnd with `reason: clear`, taken (removed) by the session that
links to it. A note or spool entry older than WINDOW_NS before the start is ignored.
Bounded: only spool segments written within the window are read, at most MAX_PEEK.
"""

from __future__ import annotations

import os

from ... import jsoncore, roots
from ...sha import sha256_hex
from ...state import spool
from ...state.layout import valid_session_id
from ..kit import sessionfile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONTINUING = ("resume", "fork", "clear")
WINDOW_NS = 30 * 10**9
MAX_PEEK = 32  # other sessions' spools read at one clear start
TAIL = 256 << 10  # bytes of a transcript read for the session id before a resume
HEAD = 1 << 20  # bytes of a new transcript read for an id it copied


def previous(payload: dict[str, Any], size: int, ts_ns: int) -> str | None:
    """The session this SessionStart continues, when the client tells it; else None."""
    sid, path = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(path, str) or not path or not isinstance(sid, str):
        return None
    source = payload.get("source")
    if source == "resume" and size > 0:
        found = _last_session_id(path, size)
        if found:
            return found
    if source == "clear":
        found = _cleared(sid, os.path.dirname(path), ts_ns)
        if found:
            return found
    return _copied_from(path, sid)


def note_clear(payload: dict[str, Any], ts_ns: int) -> None:
    """At a SessionEnd with reason clear: tell the session that starts next."""
    sid, path = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(sid, str) or not isinstance(path, str) or not path:
        return
    from ...state.layout import Layout
    from ...state.session import write_json  # the dispatcher's, not the blocking hook's, import

    folder = Layout().links_dir()
    try:
        roots.makedirs_private(folder)
        write_json(_note(os.path.dirname(path)), {"session_id": sid, "ts_ns": ts_ns})
    except OSError:
        pass


def _read_note(transcript_folder: str) -> Any:
    from ...state.session import read_json

    return read_json(_note(transcript_folder))


def _note(transcript_folder: str) -> str:
    key = sha256_hex(transcript_folder.encode("utf-8", "surrogatepass"))[:32]
    from ...state.layout import Layout

    return Layout().link_note(key)


def _last_session_id(path: str, size: int) -> str | None:
    """The session id of the last line the transcript held before this start."""
    start = max(0, size - TAIL)
    data = sessionfile.read_at(path, start, size - start)
    if data is None:
        return None
    lines = data.split(b"\n")
    if start:
        lines = lines[1:]  # the first one is cut
    for line in reversed(lines):
        if b'"sessionId"' not in line:
            continue
        try:
            sid = jsoncore.loads(line).get("sessionId")
        except (ValueError, AttributeError, RecursionError):
            continue
        if isinstance(sid, str) and valid_session_id(sid):
            return sid
    return None


def _copied_from(path: str, own: str) -> str | None:
    """Another session named by the lines a new transcript copied (a fork), if any."""
    data = sessionfile.read_at(path, 0, HEAD)
    if data is None:
        return None
    for line in data.split(b"\n"):
        if b'"requestSessionId"' not in line:
            continue
        try:
            other = jsoncore.loads(line).get("requestSessionId")
        except (ValueError, AttributeError, RecursionError):
            continue
        if isinstance(other, str) and other != own and valid_session_id(other):
            return other
    return None


def _cleared(own: str, transcript_folder: str, ts_ns: int) -> str | None:
    """The session whose SessionEnd(clear) for this folder came last before `ts_ns`."""
    best: tuple[int, str] | None = None
    for found in (_from_spools(own, transcript_folder, ts_ns), _from_note(own, transcript_folder)):
        if found and ts_ns - WINDOW_NS <= found[0] <= ts_ns and (best is None or found > best):
            best = found
    if best is None:
        return None
    note = _read_note(transcript_folder)
    if isinstance(note, dict) and note.get("session_id") == best[1]:
        try:
            os.unlink(_note(transcript_folder))
        except OSError:
            pass
    return best[1]


def _from_note(own: str, transcript_folder: str) -> tuple[int, str] | None:
    note = _read_note(transcript_folder)
    if not isinstance(note, dict):
        return None
    sid, ts = note.get("session_id"), note.get("ts_ns")
    if isinstance(sid, str) and sid != own and isinstance(ts, int):
        return ts, sid
    return None


def _from_spools(own: str, transcript_folder: str, ts_ns: int) -> tuple[int, str] | None:
    from ...state.layout import Layout

    base = Layout().sessions_dir()
    try:
        names = [n for n in os.listdir(base) if n != own and valid_session_id(n)]
    except OSError:
        return None
    recent = []
    for name in names:
        folder = os.path.join(base, name, "spool")
        segs = spool.segment_names(folder)
        if not segs:
            continue
        try:
            mtime = os.stat(os.path.join(folder, segs[-1])).st_mtime_ns
        except OSError:
            continue
        if mtime >= ts_ns - WINDOW_NS:
            recent.append((mtime, name, os.path.join(folder, segs[-1])))
    best = None
    for _, name, seg in sorted(recent, reverse=True)[:MAX_PEEK]:
        try:
            with open(seg, "rb") as f:
                data = f.read(spool.SEGMENT_BYTES * 2)
        except OSError:
            continue
        for _, _, body in spool.scan_frames(data):
            entry = spool.parse_entry(body)
            if entry is None or entry.event != "SessionEnd" or entry.ts_ns > ts_ns:
                continue
            try:
                p = jsoncore.loads(entry.payload)
            except (ValueError, RecursionError):
                continue
            if not isinstance(p, dict) or p.get("reason") != "clear":
                continue
            path = p.get("transcript_path")
            ours = isinstance(path, str) and os.path.dirname(path) == transcript_folder
            if ours and (best is None or entry.ts_ns > best[0]):
                best = (entry.ts_ns, name)
    return best
