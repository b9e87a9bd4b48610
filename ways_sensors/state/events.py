"""The events log: one content-free JSON line per thing that went wrong (or notably right).

`<state>/events.log` (layout.py), 0600 in a 0700 folder (secure.py), appended with one write
per line; past LOG_MAX bytes it becomes `events.log.1` (the older one dropped). A line
names what happened and where (`kind`, sensor, rule, session, counts, durations, an
exception's class name), never what the session said: no prompt, no tool input, no
record, no exception message (those can quote payloads). Writing it must never raise:
the hook calls it from its last-resort handler. Stdlib-only, import-free (`posix`).
"""

from . import secure
from .layout import Layout
from .logline import LOG_MAX as LOG_MAX  # past it events.log becomes events.log.1
from .logline import iso_utc as iso_utc


def unix_nano(timestamp: object) -> int:
    """Nanoseconds since the epoch from an ISO 8601 time (`2026-11-29T11:40:02.123Z`,
    any fraction, Z or an offset); 0 (unknown, left out) when it is not one."""
    import calendar
    import re

    if not isinstance(timestamp, str):
        return 0
    m = re.fullmatch(
        r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9})\d*)?"
        r"(Z|z|[+-]\d\d:?\d\d)?",
        timestamp.strip(),
    )
    if not m:
        return 0
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    try:
        secs = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
    except (ValueError, OverflowError):
        return 0
    zone = m.group(8) or "Z"
    if zone not in ("Z", "z"):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        secs -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    frac = int((m.group(7) or "0").ljust(9, "0"))
    return max(0, secs * 1_000_000_000 + frac)


def log(kind: str, **fields: object) -> None:
    """Append one line (logline.py's format); silently gives up when the state root
    cannot be written (secure.append_log)."""
    try:
        from .logline import line

        secure.append_log(line(kind, fields))
    except BaseException:  # the log is the last resort: it must never raise
        pass


def read(limit: int | None = None, layout: Layout | None = None) -> list[str]:
    path = (layout or Layout()).events_log()
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    return lines[-limit:] if limit else lines
