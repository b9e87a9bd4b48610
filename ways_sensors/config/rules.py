"""One loaded rule: which sensor it belongs to, its name, its two ids, its spec and its
compiled `where`, and where it was read from.

Everything that runs a rule (the dispatcher's workers, the blocking path, `fire`, the
previews) is handed this one object, and asks it for its ids rather than spelling them:
`key` (`sensor.rule`, file names and internal tables) and `label` (`sensor/rule`, what a
user reads), both made by layout.py. `spec` is the validated sensor-file entry
(spec.Rule); two loaded rules are the same rule when their sensor, name and spec are.
"""

from __future__ import annotations

from .. import jsoncore
from ..index import Index
from ..roots import site_packages
from ..state.layout import rule_key, rule_label
from ..targets.timing import parse_duration
from .conditions import Where, compile_where

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .spec import Rule


class LoadedRule:
    """A rule as loaded: its sensor, name, spec, compiled `where`, layer and file.
    Equal only to itself (a dispatcher tells an edited rule by `same`)."""

    __slots__ = ("layer", "name", "path", "sensor", "spec", "where")

    def __init__(
        self, sensor: str, name: str, spec: Rule, where: Where, layer: str, path: str
    ) -> None:
        self.sensor = sensor
        self.name = name
        self.spec = spec
        self.where = where
        self.layer = layer
        self.path = path

    def __repr__(self) -> str:
        return f"LoadedRule({self.sensor!r}, {self.name!r}, layer={self.layer!r})"

    @property
    def key(self) -> str:
        """`sensor.rule` (layout.rule_key)."""
        return rule_key(self.sensor, self.name)

    @property
    def label(self) -> str:
        """`sensor/rule` (layout.rule_label)."""
        return rule_label(self.sensor, self.name)

    @property
    def at_least_once(self) -> bool:
        """The rule keeps a debt (`delivery: at_least_once`): a record it cannot deliver
        or finish now is held, then parked as a dead letter, never lost; a best_effort
        rule's failures lose it, counted."""
        return self.spec.delivery == "at_least_once"

    def same(self, other: LoadedRule) -> bool:
        """The same rule, unchanged: a worker for it goes on (the dispatcher's reload)."""
        return (self.sensor, self.name, self.spec) == (other.sensor, other.name, other.spec)


def compiled(sensor: str, name: str, spec: Rule, layer: str, path: str) -> LoadedRule:
    """A rule whose `where` is compiled here (raises conditions.ConditionError)."""
    return LoadedRule(sensor, name, spec, compile_where(spec.where, spec.match), layer, path)


def enabled(idx: Index, mode: str | None = None) -> dict[str, LoadedRule]:
    """{rule key: rule} of the index's enabled rules (optionally of one mode), for the
    dispatcher and the blocking path."""
    site_packages()  # spec decoding needs msgspec (the hook runs with -S)
    from .specdecode import decode_rule

    out = {}
    for item in jsoncore.loads(idx.rules_text).get("rules", []):
        if not item.get("enabled"):
            continue
        spec = decode_rule(item["spec"])
        if mode and spec.mode != mode:
            continue
        rule = compiled(item["sensor"], item["rule"], spec, item["layer"], item["file"])
        out[rule.key] = rule
    return out


def blocking(idx: Index) -> dict[str, LoadedRule]:
    """{rule key: rule} of the index's enabled blocking rules, for the hook: read from
    each one's `plain` form (indexbuild.plain) without spec.py, whose import brings
    msgspec's type machinery and every target kind; only the rule's own kind is loaded,
    to decode its consumer's spec. An index written before the plain form: `enabled`."""
    out = {}
    for item in jsoncore.loads(idx.rules_text).get("rules", []):
        if not item.get("enabled") or item["spec"].get("mode") != "blocking":
            continue
        plain = item.get("plain")
        if not isinstance(plain, dict):
            return enabled(idx, mode="blocking")
        rule = compiled(item["sensor"], item["rule"], _plain(plain), item["layer"], item["file"])
        out[rule.key] = rule
    return out


class _Fields:
    """A plain struct's fields as attributes (a rule's `fields`, `batch`, `redact`)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


class _Dispatch:
    def __init__(self, kind: str, target: Any) -> None:
        self.kind, self.target = kind, target


class _PlainRule(_Fields):
    """What spec.Rule answers, from its plain form: every field, `timeout_s`, and the
    consumer's own Spec struct under `dispatch.target`."""

    timeout: float | int | str

    @property
    def timeout_s(self) -> float:
        return parse_duration(self.timeout)


def _plain(values: dict[str, Any]) -> Rule:
    from .. import targets

    spec = dict(values)
    [(kind, target)] = [(k, v) for k, v in values["dispatch"].items() if v is not None]
    if kind in targets.STDLIB_KINDS:  # flat: its plain form read as attributes
        consumer: Any = _Fields(target)  # (no msgspec: a blocking hook's largest import)
    else:
        site_packages()  # the kind's module and msgspec are installed packages
        import msgspec

        consumer = msgspec.convert(target, targets.get(kind).Spec)
    spec["dispatch"] = _Dispatch(kind, consumer)
    for name in ("fields", "batch", "redact"):  # redact: {kinds: [...]} (spec.Redact)
        if isinstance(spec.get(name), dict):
            spec[name] = _Fields(spec[name])
    plain: Any = _PlainRule(spec)  # answers what spec.Rule does (its docstring)
    rule: Rule = plain
    return rule
