"""A record's time in nanoseconds since the epoch, for its spans: events.unix_nano, with a
fast path for the form records' timestamps have (`2026-12-02T18:00:00.000Z`: what
logline.iso_utc writes, and the agents' own ISO times), since a span needs one or two
per record and the general parser (a regular expression, imported modules) would be a
large share of turning a batch of records into spans (bench/RESULTS.md, Traces)."""

from __future__ import annotations

import calendar
from typing import Any

from ..state.events import unix_nano


class Clock:
    """events.unix_nano, with a fast path for the records' own form of time
    (`2026-12-02T18:00:00.000Z`, any digits of fraction): the whole
    seconds are looked up in a small table, made once per second of the session, the
    fraction added; any other form goes through unix_nano itself."""

    MAX = 256

    def __init__(self) -> None:
        self.seconds: dict[str, int] = {}

    def __call__(self, ts: Any) -> int:
        if type(ts) is not str or len(ts) < 22 or ts[-1] != "Z" or ts[19] != ".":
            return unix_nano(ts)
        frac = ts[20:-1]
        if not (frac.isascii() and frac.isdigit()):
            return unix_nano(ts)
        head = ts[:19]
        secs = self.seconds.get(head)
        if secs is None:
            d = head
            if not (d.isascii() and d[4] == d[7] == "-" and d[10] == "T" and d[13] == d[16] == ":"):
                return unix_nano(ts)
            digits = d[:4] + d[5:7] + d[8:10] + d[11:13] + d[14:16] + d[17:19]
            if not digits.isdigit():
                return unix_nano(ts)
            try:
                secs = calendar.timegm(
                    (
                        int(d[:4]),
                        int(d[5:7]),
                        int(d[8:10]),
                        int(d[11:13]),
                        int(d[14:16]),
                        int(d[17:19]),
                        0,
                        0,
                        0,
                    )
                )
            except (ValueError, OverflowError):
                return unix_nano(ts)
            if len(self.seconds) >= self.MAX:
                self.seconds.clear()
            self.seconds[head] = secs
        return max(0, secs * 1_000_000_000 + int(frac[:9].ljust(9, "0")))
