"""One line of the events log, as it is written: content-free JSON, ASCII only.

`{"ts": ISO 8601 UTC, "kind": ..., field: value, ...}`: a value is null, true, false, a
number, or a string of at most 200 characters from a safe set (anything else becomes
`?`), so no line can carry what the session said nor break the JSON. events.log
formats its lines here and secure.append_log writes them; secure logs its own repairs
and refusals the same way, without importing events.py (no import cycle). Import-free.
"""

LOG_MAX = 1 << 20  # then events.log becomes events.log.1: the two hold at most twice this
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
    global _second
    secs, rem = divmod(ns, 1_000_000_000)
    last = _second  # (seconds, their text): a drain stamps thousands of records a second
    if last[0] != secs:
        import time

        last = _second = (secs, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)))
    return last[1] + ".%03dZ" % (rem // 1_000_000)


_second: tuple[int | None, str] = (None, "")


def line(kind: str, fields: dict[str, object]) -> bytes:
    """The events-log line for `kind` and its fields, stamped now."""
    import time

    parts = ['"ts":"%s"' % iso_utc(time.time_ns()), '"kind":%s' % _text(kind)]
    parts += ['"%s":%s' % (k, _value(v)) for k, v in fields.items()]
    return ("{" + ",".join(parts) + "}\n").encode("ascii", "replace")
