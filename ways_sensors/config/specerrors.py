"""What the spec refuses, in words a person reads: every mistake of a sensor, each at its node.

Two jobs, both off the hot path (they run only once a sensor has failed to decode):

`words(text, typ, value)` turns msgspec's validator text ("Expected `str` matching
regex '...'", "Invalid enum value 'x'") into a sentence naming what the field takes:
the valid values of an enum, "a duration like 500ms, 5s or 2m", a name's alphabet. No
regular expression and no msgspec type name reaches a user: spec.py's decoder, `lint`,
`ways settings set` and the tab's form all speak through it.

`mistakes(raw)` walks a sensor mapping against the typed spec (spec.py's structs and
the targets' Specs) and returns every mistake, not the first: each field is checked on
its own, an unknown key gets the nearest valid name, a key that belongs one level up
or down (`dispatch:` at the rules level, `file:` beside `dispatch:`) is told so, and a
struct's own cross-field check runs once its fields are fine. Each SpecError carries
the path to its node and whether the key or the value is at fault, so the loader can
name the line and column. Bounded by the file: one pass over what it holds.
"""

from __future__ import annotations

import difflib
import re
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec

from ..targets import TARGETS, names, uncarried
from .conditions import ConditionError, compile_where
from .spec import DURATION_PATTERN, NAME_PATTERN, NAME_RE, Dispatch, Rule, SensorFile, SpecError

DURATION_WORDS = "a duration like 500ms, 5s or 2m"
NAME_WORDS = "a name of lowercase letters, digits, - and _ (at most 64)"
PATTERN_WORDS = {
    DURATION_PATTERN: DURATION_WORDS,
    NAME_PATTERN: NAME_WORDS,
    r"^https?://": "a URL starting with http:// or https://",
}
_TYPE_WORDS = {
    "str": "text",
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "array": "a list",
    "object": "a mapping",
    "null": "nothing",
    "Struct": "a mapping",
}
RULE_FIELDS = tuple(f.encode_name for f in msgspec.structs.fields(Rule))


# --- the type at a path -------------------------------------------------------------


def _unwrap(t: Any) -> Any:
    """Annotated[X, ...] -> X, Optional[X] -> X (a union of more stays a union)."""
    while True:
        origin = get_origin(t)
        if origin is Annotated:
            t = get_args(t)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in get_args(t) if a is not type(None)]
            if len(args) != 1:
                return t
            t = args[0]
        else:
            return t


def _struct_of(t: Any) -> type[msgspec.Struct] | None:
    """The Struct a field holds (through Annotated, Optional and unions), if any."""
    t = _unwrap(t)
    if isinstance(t, type) and issubclass(t, msgspec.Struct):
        return t
    if get_origin(t) in (Union, types.UnionType):
        for a in get_args(t):
            s = _struct_of(a)
            if s is not None:
                return s
    return None


def _walk(t: Any) -> list[Any]:
    """Every type and Meta inside an annotation (for enums and patterns)."""
    out = [t]
    for a in get_args(t) if get_origin(t) is not None else ():
        out += _walk(a)
    if get_origin(t) is Annotated:
        out += list(getattr(t, "__metadata__", ()))
    return out


def enum_values(t: Any) -> list[str]:
    values: list[str] = []
    for x in _walk(t):
        if get_origin(x) is Literal:
            values += [str(v) for v in get_args(x)]
    return values


def _patterns(t: Any) -> set[str]:
    return {m.pattern for m in _walk(t) if isinstance(m, msgspec.Meta) and m.pattern}


def type_at(root: Any, path: list[str | int]) -> Any:
    """The annotation of the field a path inside `root` reaches (None when unknown)."""
    t = root
    for part in path:
        inner = _unwrap(t)
        struct = _struct_of(t)
        if struct is not None and isinstance(part, str):
            by_name = {f.encode_name: f.type for f in msgspec.structs.fields(struct)}
            if part not in by_name:
                return None
            t = by_name[part]
        elif get_origin(inner) is list:
            t = get_args(inner)[0]
        elif get_origin(inner) is dict:
            t = get_args(inner)[1]
        else:
            return None
    return t


# --- words --------------------------------------------------------------------------


def _kind_of(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "a value of another kind"


def _type_words(text: str) -> str:
    kinds = [_TYPE_WORDS.get(k.strip(), "a value") for k in text.split("|")]
    return " or ".join(dict.fromkeys(kinds))


def nearest(word: str, candidates: Any) -> str | None:
    got = difflib.get_close_matches(str(word), [str(c) for c in candidates], n=1, cutoff=0.6)
    return got[0] if got else None


def did_you_mean(word: str, candidates: Any) -> str:
    hint = nearest(word, candidates)
    return f": did you mean `{hint}`?" if hint else ""


def _shown(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def words(text: str, typ: Any = None, value: Any = msgspec.UNSET, field: str = "") -> str:
    """msgspec's validator text as a sentence for a person (never a regex or type name)."""
    text = text.strip()
    patterns = _patterns(typ) if typ is not None else set()
    duration = DURATION_PATTERN in patterns
    m = re.match(r"^Invalid enum value '?(.*?)'?$", text)
    if m and field == "fields":
        return "fields is the preset `metadata` or a mapping with include and exclude"
    if m:
        valid = enum_values(typ) if typ is not None else []
        what = "a section" if field == "sections" else f"a valid {field}" if field else "valid"
        if not valid:
            return f"`{m.group(1)}` is not {what}"
        hint = nearest(m.group(1), valid)
        tail = f"; did you mean `{hint}`?" if hint else ""
        return f"`{m.group(1)}` is not {what}: use one of {', '.join(valid)}{tail}"
    m = re.match(r"^Expected `[^`]*` matching regex '(.*)'$", text)
    if m:
        # msgspec shows the pattern escaped: the field's own Meta says which it was
        known = [PATTERN_WORDS[p] for p in sorted(patterns) if p in PATTERN_WORDS]
        want = known[0] if known else "text in the form the field takes"
        got = f"`{_shown(value)}` is not " if isinstance(value, str) else ""
        return f"{got}{want}" if got else f"expected {want}"
    m = re.match(r"^Expected `([^`]*)` of length ([<>]=) (\d+)$", text)
    if m:
        kind, op, n = m.groups()
        unit = "character" if kind == "str" else "item"
        s = "" if n == "1" else "s"
        if op == ">=" and n == "1":
            return "must not be empty" if kind == "str" else "needs at least one item"
        return f"{'at least' if op == '>=' else 'at most'} {n} {unit}{s}"
    m = re.match(r"^Expected `([^`]*)` ([<>]=?) (\S+)$", text)
    if m:
        _, op, n = m.groups()
        n = n[:-2] if n.endswith(".0") else n
        if duration:
            return f"{DURATION_WORDS}, above 0 and at most {n}s"
        bound = {">=": "at least", ">": "above", "<=": "at most", "<": "below"}[op]
        return f"must be {bound} {n}"
    m = re.match(r"^Expected `([^`]*)`, got `([^`]*)`$", text)
    if m:
        if duration:
            return f"expected {DURATION_WORDS}, got {_type_words(m.group(2))}"
        if get_origin(_unwrap(typ)) is Literal:
            return f"expected one of {', '.join(enum_values(typ))}, got {_type_words(m.group(2))}"
        return f"expected {_type_words(m.group(1))}, got {_type_words(m.group(2))}"
    m = re.match(r"^Object missing required field `([^`]*)`$", text)
    if m:
        return f"missing `{m.group(1)}`, which is required"
    if "regex" in text or "Expected `" in text:  # a shape not met above: never the raw text
        return "this value is not of the kind the field takes"
    return text


# --- every mistake ------------------------------------------------------------------


def _convert_error(
    exc: msgspec.ValidationError, typ: Any, value: Any, path: list[Any], whole: str = "value"
) -> SpecError:
    """The SpecError of a failed convert; `whole` is where to point when the error is
    the value's own (no deeper path): its key, for a struct's cross-field check."""
    from .spec import _split_path

    text = str(exc)
    m = re.search(r" - at `\$(.*)`$", text)
    rel = _split_path(m.group(1)) if m else []
    message = text[: m.start()] if m else text
    sub_t = type_at(typ, rel) if rel else typ
    sub_v = value
    for part in rel:
        try:
            sub_v = sub_v[part]
        except (KeyError, IndexError, TypeError):
            sub_v = msgspec.UNSET
            break
    field = next((p for p in reversed(path + rel) if isinstance(p, str)), "")
    return SpecError(words(message, sub_t, sub_v, field), path + rel, "value" if rel else whole)


def _unknown(key: Any, struct: type[msgspec.Struct], valid: list[str], path: list[Any]) -> str:
    if struct is _dispatch_type():
        if key in RULE_FIELDS:
            return (
                f"`{key}` is a rule field indented one level too far: write it beside "
                "`dispatch:`, not under it"
            )
        return f"unknown target `{key}`: use {names()}{did_you_mean(key, TARGETS)}"
    if struct is SensorFile and key in RULE_FIELDS:
        return (
            f"`{key}` is a rule field at the top of the file: indent it under a rule "
            "(rules: NAME: " + f"{key}:)"
        )
    if struct is Rule and key in TARGETS:
        return f"`{key}` is a target, so it belongs one level further in, under `dispatch:`"
    if struct is not Rule and key in RULE_FIELDS and key not in valid:
        return (
            f"`{key}` is a rule field, not a field of this {path[-1] if path else 'mapping'}: "
            "it is indented too far (write it beside `dispatch:`)"
        )
    return f"unknown field `{key}`{did_you_mean(key, valid)}"


def _dispatch_type() -> Any:
    return Dispatch


def _kind_of_spec(struct: type[msgspec.Struct]) -> str | None:
    """The target kind whose Spec `struct` is, if any."""
    return next((k for k, t in TARGETS.items() if t.Spec is struct), None)


def _check_struct(
    raw: Any, struct: type[msgspec.Struct], path: list[Any], out: list[SpecError]
) -> None:
    fields = {f.encode_name: f for f in msgspec.structs.fields(struct)}
    if not isinstance(raw, dict):
        if struct is Dispatch and raw is None:
            out.append(
                SpecError(
                    f"dispatch is empty: indent its target ({names()}) one level under it",
                    path,
                )
            )
        else:
            out.append(SpecError(f"expected a mapping, got {_kind_of(raw)}", path, at="value"))
        return
    before = len(out)
    kind = _kind_of_spec(struct)
    for key, value in raw.items():
        f = fields.get(key)
        carried = uncarried(kind, key, value) if kind and key in ("format", "encoding") else None
        if carried:  # a format of formats/ that this kind cannot carry: where it goes
            out.append(SpecError(carried, [*path, key], at="value"))
            continue
        if f is None:
            out.append(SpecError(_unknown(key, struct, list(fields), path), [*path, key]))
            continue
        if struct is SensorFile and key == "rules":
            _check_rules(value, [*path, key], out)
            continue
        _check_value(value, f.type, [*path, key], out)
    for name, f in fields.items():
        if f.required and name not in raw:
            out.append(SpecError(f"missing `{name}`, which is required", path))
    if len(out) == before and struct is not SensorFile:
        try:
            msgspec.convert(raw, struct, strict=True)
        except msgspec.ValidationError as exc:
            out.append(_convert_error(exc, struct, raw, path, whole="key"))


def _check_value(value: Any, typ: Any, path: list[Any], out: list[SpecError]) -> None:
    struct = _struct_of(typ)
    if struct is not None and (isinstance(value, dict) or struct is Dispatch):
        _check_struct(value, struct, path, out)
        return
    try:
        msgspec.convert(value, typ, strict=True)
    except msgspec.ValidationError as exc:
        out.append(_convert_error(exc, typ, value, path))


def _check_rules(rules: Any, path: list[Any], out: list[SpecError]) -> None:
    if not isinstance(rules, dict):
        out.append(SpecError("`rules` must be a mapping from rule name to rule", path))
        return
    for name, rule in rules.items():
        here = [*path, str(name)]
        if name in RULE_FIELDS:
            out.append(
                SpecError(
                    f"`{name}` is a rule field indented one level too little: it belongs "
                    "inside a rule (rules: NAME: " + f"{name}:)",
                    here,
                )
            )
            continue
        if isinstance(name, bool):  # YAML 1.1 reads on, off, yes, no as booleans
            out.append(
                SpecError(
                    f"a rule name YAML reads as {str(name).lower()} (on, off, yes or no): "
                    "quote it, e.g. 'off':",
                    path,
                )
            )
            continue
        if not isinstance(name, str) or not NAME_RE.match(name) or len(name) > 64:
            out.append(SpecError(f"`{name}` is not a rule name: use {NAME_WORDS}", here))
            continue
        before = len(out)
        _check_struct(rule, Rule, here, out)
        where = rule.get("where") if isinstance(rule, dict) else None
        if isinstance(where, dict):
            for key, cond in where.items():
                try:
                    compile_where({key: cond}, "all")
                except ConditionError as exc:
                    out.append(SpecError(exc.message, [*here, "where", key], at="value"))
        del before


def mistakes_in(raw: Any, typ: Any, prefix: list[Any]) -> list[SpecError]:
    """Every mistake of `raw` read as `typ` (a Struct, or any field type), under `prefix`."""
    out: list[SpecError] = []
    if typ is SensorFile:
        _check_struct(raw, SensorFile, list(prefix), out)
    else:
        _check_value(raw, typ, list(prefix), out)
    return out


def mistakes(raw: Any) -> list[SpecError]:
    """Every mistake of a (merged) sensor mapping, in file order; [] when it decodes."""
    if not isinstance(raw, dict):
        return [SpecError("a sensor file must be a mapping with a `rules` key", [])]
    out: list[SpecError] = []
    if raw.get("kind", "ways") != "ways":
        return [
            SpecError(
                f"kind {raw.get('kind')!r} belongs to another host; ways only loads kind: ways",
                ["kind"],
                at="value",
            )
        ]
    _check_struct(raw, SensorFile, [], out)
    return out
