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
from .roots import posix

LOG_MAX = 1 << 20  # then events.log becomes events.log.1: the two hold about 2 MiB
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@+ ")


def _text(value: object) -> str:
    s = str(value)[:200]
    if all(c in _SAFE for c in s):
        return '"' + s + '"'
    return '"' + "".join(c if c in _SAFE else "?" for c in s) + '"'


def _value(value: object) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, int) else "%.6g" % value
    return _text(value)


def iso_utc(ns: int) -> str:
    """ISO 8601 UTC with milliseconds, e.g. 2026-11-29T11:40:02.123Z."""
    import time

    secs, rem = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + ".%03dZ" % (rem // 1_000_000)


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
    """Append one line; silently gives up when the state root cannot be written."""
    try:
        import time

        ns = time.time_ns()
        parts = ['"ts":"%s"' % iso_utc(ns), '"kind":%s' % _text(kind)]
        parts += ['"%s":%s' % (k, _value(v)) for k, v in fields.items()]
        line = ("{" + ",".join(parts) + "}\n").encode("ascii", "replace")
        layout = Layout()
        path = layout.events_log()
        secure.ensure_private_dir(layout.root, layout.root)
        fd = secure.open_private(path, posix.O_WRONLY | posix.O_APPEND | posix.O_CREAT, layout.root)
        try:
            posix.write(fd, line)
            if posix.fstat(fd).st_size > LOG_MAX:
                _rotate(path, fd)
        finally:
            posix.close(fd)
    except BaseException:  # the log is the last resort: it must never raise
        pass


def _rotate(path: str, fd: int) -> None:
    """events.log past LOG_MAX becomes events.log.1 (replacing the older one), unless
    another writer rotated it already (the name no longer names our file)."""
    st = posix.fstat(fd)
    try:
        now = posix.lstat(path)
    except OSError:
        return
    if (now.st_ino, now.st_dev) == (st.st_ino, st.st_dev):
        posix.rename(path, path + ".1")


def read(limit: int | None = None, layout: Layout | None = None) -> list[str]:
    path = (layout or Layout()).events_log()
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    return lines[-limit:] if limit else lines
