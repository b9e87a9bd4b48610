"""The typed sensor-file spec (SPEC section 2): one msgspec struct per level.

These structs are the single source of truth: validation, defaults, the generated
JSON Schema in `schema/`, and the keys `ways settings` offers all come from them. The
consumers' structs live with their targets (targets/<kind>.py); `Dispatch` has one
field per kind of the registry. A file is decoded with specdecode.decode_sensor,
which turns any failure into a `SpecError` carrying the field path, so the loader can
point at a line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional, Union

import msgspec
from msgspec import Meta, Struct

from ..targets import TARGETS
from ..targets.timing import BLOCKING_CAP as BLOCKING_CAP
from ..targets.timing import DURATION_PATTERN as DURATION_PATTERN
from ..targets.timing import MAX_BATCH_DELAY as MAX_BATCH_DELAY
from ..targets.timing import MAX_TIMEOUT as MAX_TIMEOUT
from ..targets.timing import batch_for as timing_batch_for
from ..targets.timing import parse_delay as parse_delay
from ..targets.timing import parse_duration as parse_duration
from .projection import check_fields
from .sections import SECTIONS as SECTIONS  # the names alone, for what needs no spec

NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]*$"
NAME_RE = re.compile(NAME_PATTERN)

Section = Literal[
    "user_prompt",
    "queued_message",
    "assistant_response",
    "tool_call",
    "tool_result",
    "subagent",
    "compaction",
    "session_start",
    "session_end",
    "way_event",
    "permission",
    "notification",
    "error",
]

DEFAULT_TIMEOUT = 5.0
DEFAULT_QUEUE_CAP = 1000
MAX_BATCH_RECORDS = 10_000
DurationText = Annotated[
    str,
    Meta(
        pattern=DURATION_PATTERN,
        description="A duration: '500ms', '5s', '2m', or plain seconds",
    ),
]
Duration = Union[Annotated[float, Meta(gt=0, le=MAX_TIMEOUT)], DurationText]  # noqa: UP007 - a runtime alias on 3.10
Name = Annotated[str, Meta(pattern=NAME_PATTERN, max_length=64)]
Delay = Union[Annotated[float, Meta(ge=0, le=MAX_BATCH_DELAY)], DurationText]  # noqa: UP007 - as Duration
FieldPath = Annotated[str, Meta(min_length=1, max_length=256, description="a dotted record path")]


class Batch(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Records per delivery attempt: up to `max_records`; records already waiting go at
    once, and while records keep arriving the first waits at most `max_delay` for
    others. What a field leaves out comes from the target kind's default
    (spec.batch_for): otlp 512 records and 200ms; file 512 and no wait; http and
    command one record (a batched http rule posts its target's `format`)."""

    max_records: (
        Annotated[int, Meta(ge=1, le=MAX_BATCH_RECORDS, description="records per attempt")] | None
    ) = None
    max_delay: (
        Annotated[
            Delay,
            Meta(description="how long the first record waits for more: 0, 200ms, 1s (60s max)"),
        ]
        | None
    ) = None

    def __post_init__(self) -> None:
        if self.max_records is None and self.max_delay is None:
            raise ValueError("batch needs max_records, max_delay or both")
        if self.max_delay is not None:
            parse_delay(self.max_delay)


class Fields(Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """Keep only `include` paths (when given), then drop `exclude` paths; dotted paths
    with globs per segment, as in `where`. The record's identity (schema, section, seq,
    session_id, timestamp, sensor, rule, rule_seq, test) is always kept."""

    include: (
        Annotated[
            tuple[FieldPath, ...],
            Meta(max_length=64, description="paths to keep; everything else is dropped"),
        ]
        | None
    ) = None
    exclude: Annotated[tuple[FieldPath, ...], Meta(max_length=64, description="paths to drop")] = ()

    def __post_init__(self) -> None:
        check_fields(self.include, self.exclude)


class Redact(Struct, frozen=True, forbid_unknown_fields=True):
    """Secrets masked as by `default`, and the personal data of `kinds` too (issue 40;
    docs/masking.md)."""

    kinds: Annotated[
        tuple[Literal["email", "phone", "iban", "card", "ip"], ...],
        Meta(min_length=1, description="personal data masked as well as secrets"),
    ]


class _Dispatch(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Exactly one consumer."""

    def __post_init__(self) -> None:
        named = [k for k in TARGETS if getattr(self, k) is not None]
        if len(named) != 1:
            what = " and ".join(named) if named else "none"
            raise ValueError(
                f"dispatch needs exactly one of {', '.join(TARGETS)}; this one has {what}"
            )

    @property
    def kind(self) -> str:
        return next(k for k in TARGETS if getattr(self, k) is not None)

    @property
    def target(self) -> Any:
        """The kind's spec struct (targets/<kind>.py's Spec)."""
        return getattr(self, self.kind)


if TYPE_CHECKING:
    Dispatch = _Dispatch
else:  # one optional field per registered kind: the registry is the only list
    Dispatch = msgspec.defstruct(
        "Dispatch",
        [(kind, Optional[t.Spec], None) for kind, t in TARGETS.items()],  # noqa: UP045 - runtime
        bases=(_Dispatch,),
        module=__name__,
        namespace={"__doc__": _Dispatch.__doc__},
        forbid_unknown_fields=True,
        omit_defaults=True,
    )


class Rule(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """One selection and one consumer (docs/sensors.md's table of rule fields)."""

    sections: Annotated[
        list[Section],
        Meta(
            min_length=1,
            description="the record sections the rule selects: " + ", ".join(SECTIONS),
        ),
    ]
    dispatch: Annotated[
        Dispatch, Meta(description=f"the consumer: exactly one of {', '.join(TARGETS)}")
    ]
    enabled: Annotated[bool, Meta(description="false turns the rule off")] = True
    where: Annotated[
        dict[str, Any] | None,
        Meta(description="conditions on record paths: a scalar, a glob or one operator"),
    ] = None
    match: Annotated[Literal["all", "any"], Meta(description="how where conditions combine")] = (
        "all"
    )
    mode: Annotated[
        Literal["async", "blocking"],
        Meta(description="async: the dispatcher delivers; blocking: the hook waits (10 s cap)"),
    ] = "async"
    timeout: Annotated[
        Duration, Meta(description="per dispatch, enforced by the watchdog: 500ms, 5s, 2m")
    ] = DEFAULT_TIMEOUT
    delivery: Annotated[
        Literal["best_effort", "at_least_once"],
        Meta(description="best_effort: one attempt; at_least_once: retried until accepted"),
    ] = "best_effort"
    queue_cap: Annotated[
        int, Meta(ge=1, le=1_000_000, description="records waiting per rule before drops")
    ] = DEFAULT_QUEUE_CAP
    chain: Annotated[bool, Meta(description="hash chain across the rule's records")] = False
    redact: Annotated[
        Literal["default", "none"] | Redact,
        Meta(
            description="default masks secrets; none dispatches unmasked content; "
            "{kinds: [email, phone, iban, card, ip]} masks secrets and those kinds"
        ),
    ] = "default"
    fields: Annotated[
        Literal["metadata"] | Fields | None,
        Meta(
            description="what of each record the consumer receives: metadata (ids, names, "
            "times, status, sizes, keyed hashes of text), or {include, exclude} paths"
        ),
    ] = None
    batch: Annotated[
        Batch | None,
        Meta(description="records per attempt: {max_records, max_delay}; the target's default"),
    ] = None
    locked: Annotated[
        bool,
        Meta(description="managed layer only: no user or project layer can change the rule"),
    ] = False

    def __post_init__(self) -> None:
        parse_duration(self.timeout)  # raises ValueError with a readable reason

    @property
    def timeout_s(self) -> float:
        return parse_duration(self.timeout)


def batch_for(rule: Rule) -> tuple[int, float]:
    """(max_records, max_delay seconds) for a rule (timing.batch_for)."""
    return timing_batch_for(rule.dispatch.kind, rule.batch)


class SensorFile(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """One sensor: a YAML file whose stem is the sensor's name."""

    rules: Annotated[dict[Name, Rule], Meta(description="rule name -> rule")]
    spec: Annotated[Literal[1], Meta(description="the sensor-file spec version")] = 1
    kind: Annotated[Literal["ways"], Meta(description="ways sensors are kind: ways")] = "ways"
    description: Annotated[str, Meta(description="what the sensor is for")] = ""
    enabled: Annotated[bool, Meta(description="false turns every rule off")] = True
    locked: Annotated[
        bool,
        Meta(description="managed layer only: no user or project layer can change the sensor"),
    ] = False


class SpecError(ValueError):
    """A sensor that fails the spec; `path` is the field path as a list of keys, and
    `at` says whether the key there (an unknown or misplaced field) or its value is wrong."""

    def __init__(self, message: str, path: list[str | int], at: str = "key"):
        super().__init__(message)
        self.message = message
        self.path = path
        self.at = at


_PATH_RE = re.compile(r" - at `\$(.*)`$")


def _split_path(text: str) -> list[str | int]:
    """`$.rules.a.timeout` or `$.rules.a.sections[0]` -> ['rules', 'a', 'timeout']."""
    parts: list[str | int] = []
    for token in re.findall(r"\.([^.\[]+)|\[(\d+)\]|\[([^\]]+)\]", text):
        key, index, quoted = token
        if key:
            parts.append(key)
        elif index:
            parts.append(int(index))
        else:
            parts.append(quoted.strip("'\""))
    return parts


def sensor_schema() -> dict[str, Any]:
    schema = msgspec.json.schema(SensorFile)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://agent-ways.invalid/schema/sensor.schema.json"
    schema["title"] = "ways sensor file"
    return schema
