"""The spool's frame codec in process (spool.frame, scan_frames, parse_entry): every
frame reads back as written, a torn tail is "not yet written", corruption costs only
its own stretch. The real hook and dispatcher around it: test_spool_hardening.py."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from ways_sensors.state import spool

# any text a payload's event, agent or project could carry: control characters, quotes,
# backslashes, non-ASCII, and lone surrogates (a path decoded with surrogateescape)
TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
ENTRY = st.tuples(
    TEXT,  # event
    st.integers(0, 2**63 - 1),  # ts_ns
    TEXT,  # project
    st.binary(max_size=300),  # payload: raw bytes, as received
    st.integers(-1, 2**40),  # transcript_size
    TEXT,  # agent
)


def encode(e: tuple) -> bytes:
    event, ts, project, payload, size, agent = e
    return spool.frame(event, ts, project, payload, size, agent)


def decoded(data: bytes) -> list[tuple | None]:
    out: list[tuple | None] = []
    for _, _, body in spool.scan_frames(data):
        entry = spool.parse_entry(body)
        out.append(
            None
            if entry is None
            else (
                entry.event,
                entry.ts_ns,
                entry.project,
                entry.payload,
                entry.transcript_size,
                entry.agent,
            )
        )
    return out


@given(st.lists(ENTRY, max_size=6))
def test_frames_read_back_as_written_in_order(entries):
    assert decoded(b"".join(encode(e) for e in entries)) == entries


@given(st.lists(ENTRY, min_size=1, max_size=5), st.data())
def test_a_torn_tail_is_not_yet_written(entries, data):
    """A writer killed anywhere in its frame: the complete frames before it, nothing of it."""
    frames = [encode(e) for e in entries]
    whole = b"".join(frames)
    cut = data.draw(st.integers(len(whole) - len(frames[-1]), len(whole) - 1))
    assert decoded(whole[:cut]) == entries[:-1]


@given(st.lists(ENTRY, min_size=2, max_size=5), st.binary(min_size=1, max_size=50), st.data())
def test_corruption_costs_only_its_own_frame(entries, junk, data):
    """Bytes overwritten inside one frame's header: that stretch is skipped (marked
    None), every frame after it is read whole."""
    frames = [encode(e) for e in entries]
    # a payload that itself holds a frame start is read from there (the format says so)
    assume(not any(b"\n" + spool.MAGIC in f[1:] for f in frames))
    i = data.draw(st.integers(0, len(frames) - 2))
    bad = b"XX" + junk.replace(b"\n", b" ") + frames[i][2:]  # its magic destroyed
    got = decoded(b"".join([*frames[:i], bad, *frames[i + 1 :]]))
    assert got[:i] == entries[:i] and got[i] is None and got[i + 1 :] == entries[i + 1 :]


def test_a_frame_header_that_lies_about_its_length_is_skipped_not_trusted():
    good = encode(("PreToolUse", 1, "/p", b"{}", -1, "claude-code"))
    liar = spool.MAGIC + b"5\n" + b"much longer than five bytes\n"
    assert decoded(liar + good) == [None, ("PreToolUse", 1, "/p", b"{}", -1, "claude-code")]
