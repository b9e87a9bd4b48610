"""The contract every target module keeps: the `Target` Protocol, a batch item, the
attempt's context, an outcome.

Kept apart from `targets/__init__.py` so the kind modules can import it while the
package imports them into its registry. Cheap to import: the blocking hook path and the
spec load it; a kind's heavy imports (asyncio, httpx, subprocess) wait inside `deliver`.
The Protocol and the Literal types exist for the type checker only: `typing` stays off
the blocking path (dispatch/blocking.py; bench/RESULTS.md, Blocking path cost).
"""

from __future__ import annotations

from ..plain import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Final, Literal, Protocol

    import msgspec

    Status = Literal["accepted", "retryable", "permanent"]
    Cause = Literal["", "timeout", "refused", "error"]
    Advice = tuple[str, list[str | int]]  # a lint warning: (message, path in dispatch.<kind>)

# what became of an attempt (delivery.py's docstring draws the whole tree)
ACCEPTED: Final = "accepted"
RETRYABLE: Final = "retryable"  # may pass later: at_least_once backs off and tries again
PERMANENT: Final = "permanent"  # never passes as it is: at_least_once parks it as a dead letter

# why a failed attempt failed; each names a counter and an events.log kind
TIMEOUT: Final = "timeout"  # the deadline passed; whatever ran was cut or killed
REFUSED: Final = "refused"  # the consumer answered no: an HTTP status, a non-zero exit
ERROR: Final = "error"  # the consumer was never reached: connection refused, no such command


class Outcome(Frozen):
    """One attempt's result. `detail` is content-free: a status code, an exit code, an
    exception's class name, never a response body or a record's text."""

    FIELDS = (
        "status",
        "cause",
        "detail",
        "retry_after",
        "killed",
        "rejected",
        "held",
        "unconfirmed",
    )
    __slots__ = FIELDS
    status: Status
    cause: Cause
    detail: str
    retry_after: float | None  # seconds the consumer asked us to wait (Retry-After)
    killed: bool  # a process group had to be killed
    rejected: int  # accepted, but the consumer dropped this many records of the batch
    # (OTLP's partialSuccess): counted as rejected, never retried, never parked
    held: bool  # accepted, but nothing was sent: the records wait in an open span (traces)
    unconfirmed: bool  # sent, but nothing can say it arrived (UDP has no acknowledgement)

    def __init__(
        self,
        status: Status,
        cause: Cause = "",
        detail: str = "",
        retry_after: float | None = None,
        killed: bool = False,
        rejected: int = 0,
        held: bool = False,
        unconfirmed: bool = False,
    ) -> None:
        self._set(status, cause, detail, retry_after, killed, rejected, held, unconfirmed)

    @property
    def accepted(self) -> bool:
        return self.status == ACCEPTED

    @property
    def permanent(self) -> bool:
        return self.status == PERMANENT


def accepted(detail: str = "", rejected: int = 0) -> Outcome:
    return Outcome(ACCEPTED, "", detail, rejected=rejected)


def held_open(detail: str) -> Outcome:
    """The records are taken, but no request was made: they open a span whose end is
    still to come (counted as held, not delivered; the span goes with its end)."""
    return Outcome(ACCEPTED, "", detail, held=True)


def unconfirmed(detail: str) -> Outcome:
    """The records went out, but the transport has no acknowledgement (syslog over
    UDP): nothing failed that can be seen, and nothing says they arrived (counted as
    unconfirmed, not delivered; `fire` never calls it delivered)."""
    return Outcome(ACCEPTED, "", detail, unconfirmed=True)


def retryable(
    cause: Cause, detail: str, retry_after: float | None = None, killed: bool = False
) -> Outcome:
    return Outcome(RETRYABLE, cause, detail, retry_after, killed)


def permanent(cause: Cause, detail: str) -> Outcome:
    return Outcome(PERMANENT, cause, detail)


class Item(Frozen):
    """One record of a batch: the finished record and its JSON bytes (no newline)."""

    FIELDS = ("record", "line")
    __slots__ = FIELDS
    record: dict[str, Any]
    line: bytes

    def __init__(self, record: dict[str, Any], line: bytes) -> None:
        # _set's two fields spelled out: one Item per record of every batch
        object.__setattr__(self, "record", record)
        object.__setattr__(self, "line", line)


class Context(Frozen):
    """What a target knows of an attempt beyond its records: whose they are, and how the
    rule batches (timing.batch_for). The file target fills its path placeholders from it."""

    FIELDS = ("sensor", "rule", "session_id", "date", "max_records", "max_delay")
    __slots__ = FIELDS
    sensor: str
    rule: str
    session_id: str
    date: str  # the first record's UTC date, YYYY-MM-DD (file takes each record's own)
    max_records: int  # the rule's batch size
    max_delay: float  # how long the rule lets a batch wait for more, in seconds

    def __init__(
        self,
        sensor: str,
        rule: str,
        session_id: str = "",
        date: str = "",
        max_records: int = 1,
        max_delay: float = 0.0,
    ) -> None:
        self._set(sensor, rule, session_id, date, max_records, max_delay)

    @property
    def batched(self) -> bool:
        """The rule allows more than one record per attempt."""
        return self.max_records > 1

    def placeholder(self, name: str) -> str:
        """The value of a path placeholder: `session_id`, `date`, `sensor` or `rule`."""
        value = getattr(self, name, "") if name in PLACEHOLDERS else ""
        return value if isinstance(value, str) else ""

    def on(self, date: str) -> Context:
        """The same context for a record of another day (itself on the same day)."""
        return self if date == self.date else self.replace(date=date)


PLACEHOLDERS = ("session_id", "date", "sensor", "rule")
HIDDEN = "[secret]"  # what lint, listings and the tab show in a secret's place


def hide(text: str) -> str:
    """`text` with each secret the masking finds (redact.find: spans, no key needed)
    replaced by HIDDEN: a consumer's description is shown to people."""
    from ..redact import find

    for start, end, _ in sorted(find(text), reverse=True):
        text = text[:start] + HIDDEN + text[end:]
    return text


def refused_connection(host: str, port: int, timeout: float) -> str | None:
    """Why a TCP connection to host:port fails from here, or None; nothing is sent."""
    import socket

    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except (OSError, ValueError) as exc:
        return f"{host}:{port} does not accept a connection ({exc})"
    return None


def refused_url(url: str, timeout: float) -> str | None:
    """refused_connection for an http(s) URL's host and port."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        return f"{url} names no valid port ({exc})"
    return refused_connection(parts.hostname or "", port, timeout)


if TYPE_CHECKING:

    class Target(Protocol):
        """What `targets/<kind>.py` provides; the registry holds modules to it.

        `Spec` is the kind's msgspec struct: the value of `dispatch.<kind>` in a sensor
        file, from which the schema, `ways settings` keys and validation all come.
        `SECRET_FIELDS` names the spec's mappings whose values may hold credentials
        (`lint` warns on literal ones; `${ENV}` references are fine). `BATCH_DEFAULT` is
        (max_records, max_delay seconds), the batch a rule gets when it sets no `batch:`
        (timing.batch_for); (1, 0.0) is one record per attempt, no wait. `FORMATS`
        maps each value of the spec's `FORMAT_FIELD` to the format of formats/ it sends
        (the formats the kind can carry; no field: the one it always sends).
        """

        @property
        def Spec(self) -> type[msgspec.Struct]: ...

        @property
        def SECRET_FIELDS(self) -> tuple[str, ...]: ...

        @property
        def BATCH_DEFAULT(self) -> tuple[int, float]: ...

        @property
        def FORMAT_FIELD(self) -> str | None: ...

        @property
        def FORMATS(self) -> dict[str, str]: ...

        def deliver(
            self, spec: Any, batch: Sequence[Item], ctx: Context, deadline: float
        ) -> Outcome:
            """Send the batch; return by `deadline` (a `time.monotonic()` instant) having
            cut or killed whatever it started. The outcome covers the whole batch."""
            ...

        def close(self) -> None:
            """Release what this thread's deliveries hold (http's event loop); the next
            `deliver` makes it again. Called as a worker thread ends and after a `fire`."""
            ...

        def destination(self, spec: Any) -> str:
            """Where records go, for people: `http https://host/path`, `file /var/log/x`."""
            ...

        def off_machine(self, spec: Any) -> bool:
            """True when session content may leave this machine through this consumer."""
            ...

        def warnings(self, spec: Any, at_least_once: bool) -> list[Advice]:
            """What `lint` warns of this kind's consumer beyond what every kind shares
            (its SECRET_FIELDS): (message, path under `dispatch.<kind>`) each."""
            ...

        def unreachable(self, spec: Any, timeout: float) -> str | None:
            """`lint --check-targets`: why records cannot reach this consumer from here,
            or None; it may open a connection, and sends nothing."""
            ...
