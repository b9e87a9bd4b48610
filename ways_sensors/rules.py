"""One loaded rule: which sensor it belongs to, its name, its two ids, its spec and its
compiled `where`, and where it was read from.

Everything that runs a rule (the dispatcher's workers, the blocking path, `fire`, the
previews) is handed this one object, and asks it for its ids rather than spelling them:
`key` (`sensor.rule`, file names and internal tables) and `label` (`sensor/rule`, what a
user reads), both made by layout.py. `spec` is the validated sensor-file entry
(spec.Rule); two loaded rules are the same rule when their sensor, name and spec are.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .conditions import Where, compile_where
from .index import Index
from .layout import rule_key, rule_label
from .spec import Rule
from .specdecode import decode_rule


@dataclass(eq=False)
class LoadedRule:
    sensor: str
    name: str
    spec: Rule
    where: Where = field(repr=False)
    layer: str
    path: str

    @property
    def key(self) -> str:
        """`sensor.rule` (layout.rule_key)."""
        return rule_key(self.sensor, self.name)

    @property
    def label(self) -> str:
        """`sensor/rule` (layout.rule_label)."""
        return rule_label(self.sensor, self.name)

    def same(self, other: LoadedRule) -> bool:
        """The same rule, unchanged: a worker for it goes on (the dispatcher's reload)."""
        return (self.sensor, self.name, self.spec) == (other.sensor, other.name, other.spec)


def compiled(sensor: str, name: str, spec: Rule, layer: str, path: str) -> LoadedRule:
    """A rule whose `where` is compiled here (raises conditions.ConditionError)."""
    return LoadedRule(sensor, name, spec, compile_where(spec.where, spec.match), layer, path)


def enabled(idx: Index, mode: str | None = None) -> dict[str, LoadedRule]:
    """{rule key: rule} of the index's enabled rules (optionally of one mode), for the
    dispatcher and the blocking path."""
    out = {}
    for item in json.loads(idx.rules_text).get("rules", []):
        if not item.get("enabled"):
            continue
        spec = decode_rule(item["spec"])
        if mode and spec.mode != mode:
            continue
        rule = compiled(item["sensor"], item["rule"], spec, item["layer"], item["file"])
        out[rule.key] = rule
    return out
