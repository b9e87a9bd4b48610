"""Consumers: one module per target kind, all exposing the same `deliver`, in one registry.

    deliver(spec, record, line, ctx, deadline) -> Outcome

`spec` is the target's struct from spec.py, `record` the finished record, `line` its
JSON bytes (one line, no newline), `ctx` the placeholders (`session_id`, `sensor`,
`rule`, `date`), `deadline` a `time.monotonic()` instant the watchdog enforces: a
target must return by then, having cut or killed whatever it started. Adding a target
is one module and one line in TARGETS.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Protocol

DELIVERED = "delivered"
REFUSED = "refused"  # the consumer answered no: non-2xx, non-zero exit
TIMEOUT = "timeout"  # the deadline passed; whatever ran was cut or killed
ERROR = "error"  # could not reach the consumer at all (connection refused, no such file)


@dataclass
class Outcome:
    status: str
    detail: str = ""  # content-free: a status code, an exit code, an exception class
    killed: bool = False  # a process group had to be killed

    @property
    def accepted(self) -> bool:
        return self.status == DELIVERED


class Target(Protocol):
    def deliver(
        self, spec: Any, record: dict[str, Any], line: bytes, ctx: dict[str, str], deadline: float
    ) -> Outcome: ...


TARGETS = {
    "file": "ways_sensors.targets.file",
    "http": "ways_sensors.targets.http",
    "command": "ways_sensors.targets.command",
}


def get(kind: str) -> Target:
    return importlib.import_module(TARGETS[kind])  # type: ignore[return-value]
