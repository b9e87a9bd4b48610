"""Durations and batches as a rule spells them: `500ms`, `5s`, `2m` or plain seconds, and
the batch a rule's attempt takes.

spec.py validates sensor files with these (its structs' bounds come from here); the
blocking path reads a rule's timeout and batch without spec.py, whose import brings
msgspec's type machinery and every target kind (bench/RESULTS.md, Blocking path cost).
Stdlib only.
"""

from __future__ import annotations

MAX_TIMEOUT = 3600.0
BLOCKING_CAP = 10.0  # a hook waits at most this for its blocking rules
MAX_BATCH_DELAY = 60.0

# what a duration's text may be (specerrors.py words it for people); read by _number
# without `re`, which no blocking hook's path imports (regex.py)
DURATION_PATTERN = r"^\s*\d+(\.\d+)?\s*(ms|s|m)?\s*$"


TYPE_CHECKING = False
if TYPE_CHECKING:  # a Protocol for the type checker only: typing costs a blocking hook
    from typing import Protocol

    class Batch(Protocol):
        """A rule's `batch:` (spec.Batch): what it leaves out is the kind's default."""

        @property
        def max_records(self) -> int | None: ...

        @property
        def max_delay(self) -> float | int | str | None: ...


def _seconds(value: float | int | str) -> float:
    key = (value.__class__, value)  # True is not 1 here
    got = _SECONDS.get(key)
    if got is None:
        got = _read_seconds(value)
        if len(_SECONDS) >= 256:
            _SECONDS.clear()
        _SECONDS[key] = got
    return got


_SECONDS: dict[tuple[type, object], float] = {}  # a timeout is read for every record


def _read_seconds(value: float | int | str) -> float:
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or text like '500ms' or '5s'")
    if isinstance(value, (int, float)):
        return float(value)
    number, unit = _duration(value)
    if number is None:
        raise ValueError(f"{value!r} is not a duration; write e.g. '500ms', '5s' or 2")
    return number / 1000 if unit == "ms" else number * 60 if unit == "m" else number


def _duration(text: str) -> tuple[float | None, str]:
    """DURATION_PATTERN's number and unit; None when the text does not hold it. str.strip
    and str.isdecimal are the pattern's \\s and \\d (Unicode's, as re's are)."""
    t, unit = text.strip(), "s"
    for suffix in ("ms", "s", "m"):
        if t.endswith(suffix):
            t, unit = t[: -len(suffix)].rstrip(), suffix
            break
    whole, dot, fraction = t.partition(".")
    if not whole.isdecimal() or (dot and not fraction.isdecimal()):
        return None, unit
    return float(t), unit


def parse_duration(value: float | int | str) -> float:
    """Seconds from `500ms`, `5s`, `2m` or a plain number; ValueError otherwise."""
    seconds = _seconds(value)
    if not 0 < seconds <= MAX_TIMEOUT:
        raise ValueError(f"a duration must be above 0 and at most {MAX_TIMEOUT:g}s")
    return seconds


def parse_delay(value: float | int | str) -> float:
    """Seconds, like parse_duration, but 0 (do not wait) is allowed and 60 s is the most."""
    seconds = _seconds(value)
    if not 0 <= seconds <= MAX_BATCH_DELAY:
        raise ValueError(f"max_delay must be 0 to {MAX_BATCH_DELAY:g}s")
    return seconds


def batch_for(kind: str, batch: Batch | None) -> tuple[int, float]:
    """(max_records, max_delay seconds) for a rule of target `kind`: its `batch`, the
    rest from the kind's BATCH_DEFAULT (targets/<kind>.py)."""
    from . import get

    default = get(kind).BATCH_DEFAULT
    if batch is None:
        return int(default[0]), float(default[1])
    records = batch.max_records if batch.max_records is not None else int(default[0])
    delay = parse_delay(batch.max_delay) if batch.max_delay is not None else float(default[1])
    return records, delay
