"""A sensor mapping (merged YAML) into spec.py's structs, or the first mistake in it.

msgspec validates; when it refuses, specerrors.py finds the mistake and words it for
people (the field's path, what it takes), and a refusal never quotes the raw text. The
decoding lives here, apart from spec.py's structs, since the wording walks those structs:
spec.py imports neither this module nor specerrors.py (no import cycle).
"""

from __future__ import annotations

from typing import Any

import msgspec

from .spec import _PATH_RE, NAME_RE, Rule, SensorFile, SpecError, _split_path


def _convert(raw: Any, typ: Any, prefix: list[str | int]) -> Any:
    try:
        return msgspec.convert(raw, typ, strict=True)
    except msgspec.ValidationError as exc:
        from .specerrors import mistakes_in  # the error path only: the words for people

        found = mistakes_in(raw, typ, prefix)
        if found:
            raise found[0] from None
        text = str(exc)  # the walker and msgspec disagree: still never the raw text
        m = _PATH_RE.search(text)
        path = _split_path(m.group(1)) if m else []
        raise SpecError("this value is not of the kind the field takes", prefix + path) from None


def decode_sensor(raw: Any) -> SensorFile:
    """Validate a merged sensor mapping; SpecError names the first problem and its path.

    Rules are converted one by one, because msgspec elides mapping keys from its error
    paths and the rule's name is what a person needs to find the line.
    """
    if not isinstance(raw, dict):
        raise SpecError("a sensor file must be a mapping with a `rules` key", [])
    if raw.get("kind", "ways") != "ways":
        raise SpecError(
            f"kind {raw.get('kind')!r} belongs to another host; ways only loads kind: ways",
            ["kind"],
        )
    rules_raw = raw.get("rules")
    top = _convert({**raw, "rules": {}} if "rules" in raw else raw, SensorFile, [])
    if not isinstance(rules_raw, dict):
        raise SpecError("`rules` must be a mapping from rule name to rule", ["rules"])
    rules = {}
    for name, rule in rules_raw.items():
        if not isinstance(name, str) or not NAME_RE.match(name) or len(name) > 64:
            raise SpecError(
                f"{name!r} is not a rule name: use lowercase letters, digits, - and _",
                ["rules", str(name)],
            )
        rules[name] = _convert(rule, Rule, ["rules", name])
    sensor: SensorFile = msgspec.structs.replace(top, rules=rules)
    return sensor


def decode_rule(raw: Any) -> Rule:
    rule: Rule = _convert(raw, Rule, [])
    return rule
