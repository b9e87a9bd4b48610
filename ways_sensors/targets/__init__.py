"""Consumers: one module per target kind, each the whole room, in one registry.

A kind's module (`targets/<kind>.py`) owns everything about it, and holds to the
`Target` Protocol of base.py (the type checker checks each entry of TARGETS):

    Spec                                  its msgspec struct, `dispatch.<kind>` in YAML
    SECRET_FIELDS                         the spec's mappings that may hold credentials
    BATCH_DEFAULT                         (max_records, max_delay s) without `batch:`
    deliver(spec, batch, ctx, deadline)   one attempt for a batch -> Outcome
    close()                               release what this thread's attempts hold
    destination(spec) -> str              where records go, for people
    off_machine(spec) -> bool             may session content leave this machine?
    warnings(spec, at_least_once)         what lint warns of this consumer, beyond what
                                          every kind shares (its SECRET_FIELDS)
    unreachable(spec, timeout)            `lint --check-targets`: why it cannot be
                                          reached from here, or None (nothing is sent)

Shared code is public to every kind, never imported from a sibling's privates: the
contract in base.py, the HTTP transport (a POST under a total deadline, `${ENV}`
headers, Retry-After, a per-thread event loop) in transport.py, for http and otlp.

spec.py builds `Dispatch` from TARGETS (one optional field per kind, exactly one set);
settings.py offers `dispatch.<kind>.<field>` keys from each Spec; lint.py and
`ways sensors list` describe rules through destination, off_machine, SECRET_FIELDS,
warnings and unreachable, and know no kind by name; every "one of file, http, command"
message is `names()`. Adding a target kind is one new module, its name in KINDS, the
regenerated schema (`python -m ways_sensors.config.schemas`), and its tests (the
registry test checks the contract).
The kinds' modules load on first use: `get(kind)` loads one, TARGETS all of them.
A kind in STDLIB_KINDS (file, command) imports nothing outside the standard library
and keeps its flat Spec in `<kind>_spec.py`, served by the module's `__getattr__` on
first use: a blocking rule's hook, which runs without site-packages, reads such a
rule's consumer from the index's plain form and never loads msgspec (rules._plain).

The batch form, decided here for batching (issue 13): `deliver` always takes a
non-empty sequence of `Item(record, line)` (line: the record's JSON bytes, no newline)
and answers one Outcome for the whole batch, so a failed batch is retried or parked
whole, and a consumer may see a record twice (at-least-once). The worker (worker.py)
passes batches as the rule's `batch:` allows; the blocking path and `fire` pass one
record. What each kind does with more than one: file appends all lines in one write();
command sends all lines on one stdin (with `input: args`, one run per record); http
posts one request per batch in its `format` (a JSON array, NDJSON or HEC envelopes)
when the rule is batched, else one request per record; otlp one request per batch.
What a record becomes on the wire (the record itself, an OCSF event, an ECS document, a
HEC envelope) is the format layer's (formats/): a target picks a format by name and
frames what it makes; no format knows a transport.

`ctx` is a typed `Context` (base.py): `session_id`, `sensor`, `rule` and `date` (the
first record's; file takes each record's own date), and the rule's batch, `max_records`
and `max_delay` (`ctx.batched`: more than one record per attempt). A consumer that
accepts a batch but drops part of it (OTLP's partialSuccess) is an accepted Outcome
carrying the dropped count (`rejected`).

`BATCH_DEFAULT = (max_records, max_delay seconds)` is the batch a rule gets when it
sets no `batch:` (timing.batch_for); (1, 0.0) is one record per attempt.
"""

from __future__ import annotations

import sys

from .base import ACCEPTED, ERROR, PERMANENT, REFUSED, RETRYABLE, TIMEOUT, Context, Item, Outcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .base import Target  # a Protocol, for the type checker only (base.py)

# the registry: each kind's module, targets/<kind>.py, in the order messages name them
KINDS = ("file", "http", "command", "otlp", "syslog", "store")
# kinds whose module imports nothing outside the standard library and whose Spec is flat
# (its own module, loaded on first use): a blocking rule's hook reads their consumer from
# the index's plain form, without msgspec or site-packages (rules._plain)
STDLIB_KINDS = ("file", "command")

TARGETS: dict[str, Target]  # every kind, loaded at the first use (__getattr__ below)

__all__ = [
    "ACCEPTED",
    "ERROR",
    "PERMANENT",
    "REFUSED",
    "RETRYABLE",
    "KINDS",
    "TARGETS",
    "TIMEOUT",
    "Context",
    "Item",
    "Outcome",
    "get",
    "names",
]


def get(kind: str) -> Target:
    """One kind's module, loading that kind only (the blocking path sends to one rule's
    kind: the others' modules, HTTP and OTLP among them, cost the hook their imports);
    KeyError for a kind that is not registered."""
    if kind not in KINDS:
        raise KeyError(kind)
    name = __name__ + "." + kind
    module = sys.modules.get(name)
    if module is None:
        __import__(name)
        module = sys.modules[name]
    target: Target = module  # the registry test checks each against the Protocol
    return target


def __getattr__(name: str) -> object:
    if name == "TARGETS":  # every kind: spec.py's Dispatch, settings, lint, list
        registry = {kind: get(kind) for kind in KINDS}
        globals()["TARGETS"] = registry
        return registry
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def names(last: str = "or") -> str:
    """`file, http or command`: the kinds, for messages."""
    kinds = list(KINDS)
    return kinds[0] if len(kinds) == 1 else f"{', '.join(kinds[:-1])} {last} {kinds[-1]}"


def _format_named(value: str) -> str | None:
    """The format of formats/ a spec value names: its own name (`otlp-protobuf` spelt
    either way), or the value a kind's format field sends it by (http's `array`)."""
    from .. import formats

    name = value.strip().lower().replace("-", "_")
    if name in formats.NAMES:
        return name
    if name.startswith("otlp"):
        return "otlp_protobuf" if "proto" in name else "otlp_json"
    return next((f for k in KINDS for v, f in get(k).FORMATS.items() if v == name), None)


def uncarried(kind: str, key: str, value: object) -> str | None:
    """Lint's one line when a rule asks `kind` for a format it cannot carry (`key:
    value`: OCSF over otlp, OTLP protobuf into a file), naming the kinds that carry it
    and how; None when it can, or when `value` names no format (then the spec's own
    check speaks)."""
    target = get(kind)
    if key == target.FORMAT_FIELD and value in target.FORMATS:
        return None  # its own word for a format it carries (otlp's `encoding: json`)
    wanted = _format_named(value) if isinstance(value, str) else None
    if wanted is None or wanted in target.FORMATS.values():
        return None
    field, values = target.FORMAT_FIELD, list(dict.fromkeys(target.FORMATS.values()))
    if not field:
        sends = f"{_either(values)} only"
    elif list(target.FORMATS) == values:
        sends = f"`{field}: {_either(values)}`"
    else:
        sends = f"{_either(values)} (`{field}: {_either(list(target.FORMATS))}`)"
    goes = [k for k in KINDS if wanted in get(k).FORMATS.values()]
    how = ""
    for k in goes:
        there = get(k)
        if there.FORMAT_FIELD:
            v = next(v for v, f in there.FORMATS.items() if f == wanted)
            how = f" (`{k}: {{{there.FORMAT_FIELD}: {v}, ...}}`)"
            break
    said = f"the {kind} target cannot carry {wanted}: it carries {sends}"
    return f"{said}; {wanted} goes by {_either(goes)}{how}"


def _either(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
