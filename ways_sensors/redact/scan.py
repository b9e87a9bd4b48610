"""The scan's engine: one pass per detector over a string, linear in its length.

A detector (shapes.py, structure.py) finds candidates with a literal needle or a token
run, and examines each with a regular expression of bounded width (no unbounded
repeat: tests/test_redact.py checks every one) over a bounded window, so a candidate
costs at most a constant, and the candidates of one detector never overlap by more
than that window. Regions searched around many candidates are merged first, so no
character is searched twice by one detector. Hence: the work on a string is at most
(number of detectors) x (its length) x (a constant), whatever the string holds;
hostile text made of needles (`sk-sk-sk-...`) costs what ordinary text costs, times
that constant.

`Context.work`, when a `measure()` block is active, counts that work (characters handed
to a regex, candidates examined, characters read around them), so tests can show the
linearity without timing anything. A `deadline` (a `time.monotonic()` instant) is
checked between detectors and every few candidates; past it, `MaskTimeout` is raised
and the caller drops the record (counted) instead of sending it unmasked.
"""

from __future__ import annotations

import _thread  # not threading: the blocking path's imports (dispatch/blocking.py)
import time

from ..regex import Lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterator


class MaskTimeout(Exception):
    """Masking a record passed its deadline; nothing was returned, nothing must be sent."""


class Work:
    """What the scan did, in units each bounded by a constant amount of engine time.
    (Plain classes here: `dataclasses` stays off the blocking path, dispatch/blocking.py.)"""

    __slots__ = ("around", "candidates", "searched", "strings")

    def __init__(self) -> None:
        self.searched = 0  # characters handed to a regex search (windows, whole strings)
        self.candidates = 0  # candidates examined by a detector (each a bounded match)
        self.around = 0  # characters read around candidates (names, lines, tokens)
        self.strings = 0  # strings scanned

    @property
    def total(self) -> int:
        return self.searched + self.candidates + self.around


_measuring = _thread._local()
_blocks = [0]  # measure() blocks open in any thread: a dispatcher never opens one


def measure() -> _Measure:
    """`with measure() as work:` counts the work of every scan in this thread inside the
    block (a test hook)."""
    return _Measure()


class _Measure:
    def __enter__(self) -> Work:
        work = _measuring.work = Work()
        _blocks[0] += 1
        return work

    def __exit__(self, *exc: object) -> None:
        _measuring.work = None
        _blocks[0] -= 1


def measuring() -> bool:
    """Whether a `measure()` block is active in this thread (cheap when none is open
    anywhere, which is always, outside the tests)."""
    return _blocks[0] > 0 and getattr(_measuring, "work", None) is not None


WINDOW_LIMIT = 64  # more needle hits than this: search the whole string once instead
TICK = 64  # candidates between deadline checks
_RUN_TABLE = bytes(
    ord("a") if (chr(i).isascii() and (chr(i).isalnum() or chr(i) in "_-")) else ord(" ")
    for i in range(256)
)
MARK = Lazy(r"\[REDACTED:[a-z0-9\-]{1,64}:[0-9a-f]{8}\]")
RUN = 20  # a token run: this many [A-Za-z0-9_-] in a row
RUN_NEEDLE = b"a" * RUN


class Context:
    """One string being scanned: its folded copy, the spans found, the deadline."""

    def __init__(self, text: str, deadline: float | None) -> None:
        self.text = text
        self.n = len(text)
        # ASCII-folded, same length as text (str.lower() can grow some characters)
        self.folded = text.lower() if text.isascii() else text.translate(_FOLD)
        self.deadline = deadline
        self.work: Work | None = getattr(_measuring, "work", None) if _blocks[0] else None
        if self.work is not None:
            self.work.strings += 1
        self.found: list[tuple[int, int, str]] = []
        self._covered: bytearray | None = None
        self._runs: bytes | None = None
        self._ticks = 0
        self.small = self.n < 65536  # an `in` test first is cheaper than a regex pass
        if "[REDACTED:" in text:  # masked already (a record read back): never mask a mark
            self._covered = bytearray(self.n)
            for m in MARK.finditer(text):
                self._covered[m.start() : m.end()] = b"\x01" * (m.end() - m.start())

    # -- bookkeeping -------------------------------------------------------------
    def check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise MaskTimeout()

    def tick(self, around: int = 0) -> None:
        """One candidate examined (and `around` characters read for it)."""
        if self.work is not None:
            self.work.candidates += 1
            self.work.around += around
        self._ticks += 1
        if self._ticks % TICK == 0:
            self.check_deadline()

    def searched(self, chars: int) -> None:
        if self.work is not None:
            self.work.searched += chars

    # -- spans ---------------------------------------------------------------------
    def covered(self, start: int, end: int) -> bool:
        """Whether any of text[start:end] is already masked."""
        return self._covered is not None and self._covered.find(1, start, end) >= 0

    def add(self, start: int, end: int, kind: str) -> bool:
        """Mask text[start:end] as `kind`, unless it overlaps what is masked already."""
        if end <= start:
            return False
        if self._covered is None:
            self._covered = bytearray(self.n)
        elif self._covered.find(1, start, end) >= 0:
            return False
        self._covered[start:end] = b"\x01" * (end - start)
        self.found.append((start, end, kind))
        return True

    # -- searching -------------------------------------------------------------------
    def has(self, needles: tuple[str, ...], folded: bool) -> bool:
        hay = self.folded if folded else self.text
        return any(k in hay for k in needles)

    def finditer(
        self, rx: re.Pattern[str] | Lazy, folded: bool, lo: int = 0, hi: int | None = None
    ) -> Iterator[re.Match[str]]:
        hi = self.n if hi is None else min(hi, self.n)
        self.searched(hi - lo)
        return rx.finditer(self.folded if folded else self.text, lo, hi)

    def windows(
        self, needles: tuple[str, ...], folded: bool, back: int, ahead: int
    ) -> list[tuple[int, int]]:
        """Merged regions around the needles' occurrences, or the whole string when
        they are many (a regex pass is then cheaper than many small ones)."""
        hay = self.folded if folded else self.text
        hits: list[int] = []
        for k in needles:
            i = hay.find(k)
            while i >= 0:
                hits.append(i)
                if len(hits) > WINDOW_LIMIT:
                    return [(0, self.n)]
                i = hay.find(k, i + 1)
        hits.sort()
        out: list[tuple[int, int]] = []
        for i in hits:
            lo, hi = max(0, i - back), min(self.n, i + ahead)
            if out and lo <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], hi))
            else:
                out.append((lo, hi))
        return out

    def runs(
        self, keep: re.Pattern[str] | Lazy, examine: Callable[[Context, int, int], None]
    ) -> None:
        """Every run of RUN or more [A-Za-z0-9_-], left to right, found with two
        `bytes.find` per run over a one-byte-per-character shape of the text; `examine`
        gets those `keep` does not fullmatch (plain hashes, numbers, words) or that
        follow a dot and are 40 or longer, and that are not masked yet. One tight loop:
        a hash-heavy output has a run every 40 bytes."""
        if self._runs is None:
            raw = self.text.encode("ascii", "replace") if not self.text.isascii() else None
            self._runs = (raw if raw is not None else self.text.encode()).translate(_RUN_TABLE)
            self.searched(self.n)
        find, skip, text, n, count = self._runs.find, keep.fullmatch, self.text, self.n, 0
        i = find(RUN_NEEDLE)
        while i >= 0:
            e = find(b" ", i + RUN)
            if e < 0:
                e = n
            count += 1
            # a long plain run after a dot may end a dotted token (`pat<id>.<64 hex>`)
            dotted = e - i >= 40 and i and text[i - 1] == "."
            if (dotted or skip(text, i, e) is None) and not self.covered(i, e):
                self.tick()
                examine(self, i, e)
            i = find(RUN_NEEDLE, e)
        if self.work is not None:
            self.work.candidates += count  # every run is looked at, if only to skip it


_FOLD = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


class Scan:
    """The detectors in order: an earlier one's span wins over a later one's."""

    def __init__(self, detectors: list[Callable[[Context], None]]) -> None:
        self.detectors = detectors

    def find(self, text: str, deadline: float | None = None) -> list[tuple[int, int, str]]:
        ctx = Context(text, deadline)
        for detect in self.detectors:
            ctx.check_deadline()
            detect(ctx)
        ctx.found.sort()
        return ctx.found
