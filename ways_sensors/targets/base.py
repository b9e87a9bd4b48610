"""The contract every target module keeps: the `Target` Protocol, a batch item, an outcome.

Kept apart from `targets/__init__.py` so the kind modules can import it while the
package imports them into its registry. Cheap to import: the blocking hook path and the
spec load it; a kind's heavy imports (asyncio, httpx, subprocess) wait inside `deliver`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, NamedTuple, Protocol

import msgspec

# what became of an attempt (delivery.py's docstring draws the whole tree)
ACCEPTED: Final = "accepted"
RETRYABLE: Final = "retryable"  # may pass later: at_least_once backs off and tries again
PERMANENT: Final = "permanent"  # never passes as it is: at_least_once parks it as a dead letter

# why a failed attempt failed; each names a counter and an events.log kind
TIMEOUT: Final = "timeout"  # the deadline passed; whatever ran was cut or killed
REFUSED: Final = "refused"  # the consumer answered no: an HTTP status, a non-zero exit
ERROR: Final = "error"  # the consumer was never reached: connection refused, no such command

Status = Literal["accepted", "retryable", "permanent"]
Cause = Literal["", "timeout", "refused", "error"]


@dataclass(frozen=True)
class Outcome:
    """One attempt's result. `detail` is content-free: a status code, an exit code, an
    exception's class name, never a response body or a record's text."""

    status: Status
    cause: Cause = ""
    detail: str = ""
    retry_after: float | None = None  # seconds the consumer asked us to wait (Retry-After)
    killed: bool = False  # a process group had to be killed
    rejected: int = 0  # accepted, but the consumer dropped this many records of the batch
    # (OTLP's partialSuccess): counted as rejected, never retried, never parked

    @property
    def accepted(self) -> bool:
        return self.status == ACCEPTED

    @property
    def permanent(self) -> bool:
        return self.status == PERMANENT


def accepted(detail: str = "", rejected: int = 0) -> Outcome:
    return Outcome(ACCEPTED, "", detail, rejected=rejected)


def retryable(
    cause: Cause, detail: str, retry_after: float | None = None, killed: bool = False
) -> Outcome:
    return Outcome(RETRYABLE, cause, detail, retry_after, killed)


def permanent(cause: Cause, detail: str) -> Outcome:
    return Outcome(PERMANENT, cause, detail)


class Item(NamedTuple):
    """One record of a batch: the finished record and its JSON bytes (no newline)."""

    record: dict[str, Any]
    line: bytes


class Target(Protocol):
    """What `targets/<kind>.py` provides; the registry holds modules to it.

    `Spec` is the kind's msgspec struct: the value of `dispatch.<kind>` in a sensor
    file, from which the schema, `ways settings` keys and validation all come.
    `SECRET_FIELDS` names the spec's mappings whose values may hold credentials
    (`lint` warns on literal ones; `${ENV}` references are fine).
    """

    @property
    def Spec(self) -> type[msgspec.Struct]: ...

    @property
    def SECRET_FIELDS(self) -> tuple[str, ...]: ...

    def deliver(
        self, spec: Any, batch: Sequence[Item], ctx: Mapping[str, str], deadline: float
    ) -> Outcome:
        """Send the batch; return by `deadline` (a `time.monotonic()` instant) having
        cut or killed whatever it started. The outcome covers the whole batch."""
        ...

    def destination(self, spec: Any) -> str:
        """Where records go, for people: `http https://host/path`, `file /var/log/x`."""
        ...

    def off_machine(self, spec: Any) -> bool:
        """True when session content may leave this machine through this consumer."""
        ...
