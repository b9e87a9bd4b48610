"""The settings keys over sensor files, derived from the typed spec (never a second list).

    ways.project_sensors                              config.yaml (user layer only)
    ways.metrics_textfile                             config.yaml (user layer only)
    ways.retention.abandoned_after                    config.yaml (user layer only)
    ways.sensors.<sensor>.<field>                     a SensorFile field
    ways.sensors.<sensor>.rules.<rule>                a whole rule
    ways.sensors.<sensor>.rules.<rule>.<field>[.sub]  a Rule field; `dispatch.http.url`,
                                                      `where.<record path>` (the rest of
                                                      the key is one where key)

Types, defaults and help texts come from msgspec's view of the structs in spec.py. A
key resolves to a path inside the sensor's file at a layer; reading merges the layers
as the hook does, and names the layer and file that decided the value.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import msgspec
import msgspec.inspect as mi

from .. import index, roots
from ..errors import UsageError
from ..targets import TARGETS, names
from .spec import NAME_RE, Rule, SensorFile

if TYPE_CHECKING:
    from .layers import Catalog

PROJECT_SENSORS = "ways.project_sensors"
METRICS_TEXTFILE = "ways.metrics_textfile"  # metrics.py: the Prometheus textfile
RETENTION_ABANDONED = "ways.retention.abandoned_after"  # retention.py: the sweep's age
DISPATCH_IDLE = "ways.dispatch_idle_seconds"  # commands/dispatch.py: the idle exit
# Every key of the user's config.yaml: (default, what it takes, help). `ways settings`
# and `lint` (an unknown config.yaml key is an error) both read this table, nothing else.
CONFIG_KEYS: dict[str, tuple[Any, str, str]] = {
    PROJECT_SENSORS: (
        [],
        "a list of project folders",
        "projects whose .claude/ways-sensors/ files may load (user config.yaml only)",
    ),
    METRICS_TEXTFILE: (
        None,
        "an absolute file path (or ~/...), e.g. <textfile directory>/ways.prom",
        "a Prometheus textfile the dispatchers rewrite with every rule's counters "
        "(absolute or ~; user config.yaml only)",
    ),
    RETENTION_ABANDONED: (
        "7d",
        "a duration: 12h, 7d, 2w or seconds; at least 1h",
        "sessions nothing wrote in for this long (they never ended) are removed "
        "by the next dispatcher start (user config.yaml only; default 7d)",
    ),
    "ways.evidence.epoch_seconds": (
        3600,
        "a number of seconds above 0",
        "how long one signing key of the evidence checkpoints lives before the next "
        "replaces it and it is destroyed (evidence/keys.py; user config.yaml only)",
    ),
    "ways.evidence.checkpoint_seconds": (
        5,
        "a number of seconds, 0 to 86400 (0: every batch)",
        "the longest a delivered chained record waits for a signed checkpoint: a batch "
        "gets one only when the tree's last is this old (evidence/cadence.py; user "
        "config.yaml only)",
    ),
    "ways.evidence.witness_seconds": (
        60,
        "a number of seconds, 0 to 86400 (0: every checkpoint)",
        "how often a witness is asked per tree at most; always at the tree's end "
        "(evidence/cadence.py; user config.yaml only)",
    ),
    "ways.evidence.machine_log_seconds": (
        60,
        "a number of seconds, 0 to 86400 (0: every append)",
        "how often the machine log is signed at most; always at a dispatcher's exit "
        "(evidence/machinelog.py; user config.yaml only)",
    ),
    "ways.evidence.checkpoints": (
        True,
        "true or false",
        "false: chained rules keep their hash chain alone, with no signed checkpoint, "
        "key or machine-log entry (`verify --key` then says unsigned; user config.yaml "
        "only; default true)",
    ),
    "ways.witness": (
        None,
        "a list of {url, key} (a tlog-witness URL and its cosignature/v1 vkey)",
        "witnesses asked to cosign each evidence checkpoint (evidence/witness.py; user "
        "config.yaml only)",
    ),
    "ways.retention.store_kept": (
        None,
        "a duration: 30d, 2w, 12h or seconds; at least 1h",
        "sessions of the session store (the store target) whose last record is older are "
        "removed from it (targets/store.py; user config.yaml only; default: kept)",
    ),
    DISPATCH_IDLE: (
        60,
        "a number of seconds, 1 to 86400",
        "seconds a session's dispatcher waits for new records before it exits; the next "
        "hook event starts it again (1 to 86400; user config.yaml only; default 60)",
    ),
}
TARGET_STRUCTS = {kind: t.Spec for kind, t in TARGETS.items()}


@dataclass
class Key:
    text: str
    sensor: str | None = None
    path: tuple[str, ...] = ()  # inside the sensor file
    info: Any = None  # msgspec.inspect.Field, or None for a whole rule / where entry
    help: str = ""

    @property
    def rule(self) -> str | None:
        return self.path[1] if len(self.path) >= 2 and self.path[0] == "rules" else None

    @property
    def default(self) -> Any:
        if self.info is None:
            return None
        if self.info.default is not msgspec.NODEFAULT:
            return self.info.default
        if self.info.default_factory is not msgspec.NODEFAULT:
            return self.info.default_factory()
        return None


@functools.cache
def _fields(struct: type[msgspec.Struct]) -> dict[str, Any]:
    """The struct's fields by name. Inspecting a struct evaluates its whole type tree,
    and `settings list` asks for every key: once per struct."""
    # a Struct class always inspects to a StructType; the stub returns the base Type
    return {f.name: f for f in cast(mi.StructType, mi.type_info(struct)).fields}


def describe(t: Any) -> str:
    """A type as a person reads it."""
    if isinstance(t, mi.Metadata):
        return describe(t.type)
    if isinstance(t, mi.BoolType):
        return "true or false"
    if isinstance(t, mi.IntType):
        lo, hi = t.ge, t.le
        return f"integer {lo}..{hi}" if lo is not None and hi is not None else "integer"
    if isinstance(t, mi.LiteralType):
        return "one of " + ", ".join(map(str, t.values))
    if isinstance(t, mi.UnionType):
        kinds = [describe(x) for x in t.types if not isinstance(x, mi.NoneType)]
        if any("number" in k for k in kinds):
            return "a duration: 500ms, 5s, 2m or seconds"
        return " or ".join(kinds)
    if isinstance(t, mi.FloatType):
        return "number"
    if isinstance(t, mi.StrType):
        from .specerrors import PATTERN_WORDS

        return PATTERN_WORDS.get(t.pattern, "text") if t.pattern else "text"
    if isinstance(t, mi.ListType):
        return "a list of " + describe(t.item_type)
    if isinstance(t, mi.DictType):
        return "a mapping"
    if isinstance(t, mi.StructType):
        return "a mapping with " + ", ".join(f.name for f in t.fields)
    return "a value"


def _desc(info: Any) -> str:
    t = info.type
    if isinstance(t, mi.Metadata) and t.extra_json_schema:
        return str(t.extra_json_schema.get("description", ""))
    return ""


def parse_key(text: str) -> Key:
    if text in CONFIG_KEYS:
        return Key(text, help=CONFIG_KEYS[text][2])
    parts = text.split(".")
    if parts[:2] != ["ways", "sensors"] or len(parts) < 4:
        raise UsageError(
            f"unknown key {text!r}",
            hint="keys look like ways.sensors.<sensor>.rules.<rule>.<field>; "
            "`ways settings list` shows them all",
        )
    sensor = parts[2]
    if not NAME_RE.match(sensor):
        raise UsageError(f"{sensor!r} is not a sensor name")
    rest = parts[3:]
    top = _fields(SensorFile)
    if rest[0] != "rules":
        if len(rest) != 1 or rest[0] not in top:
            raise UsageError(
                f"unknown key {text!r}: a sensor has "
                + ", ".join(sorted(k for k in top if k != "rules"))
                + ", rules"
            )
        return Key(text, sensor, (rest[0],), top[rest[0]], _desc(top[rest[0]]))
    if len(rest) < 2 or not NAME_RE.match(rest[1]):
        raise UsageError(f"unknown key {text!r}: name a rule after `rules.`")
    rule = rest[1]
    if len(rest) == 2:
        return Key(text, sensor, ("rules", rule), None, "a whole rule, as a YAML mapping")
    field, sub = rest[2], rest[3:]
    rf = _fields(Rule)
    if field not in rf:
        raise UsageError(f"unknown rule field {field!r}: a rule has " + ", ".join(rf))
    if field == "where" and sub:
        return Key(
            text,
            sensor,
            ("rules", rule, "where", ".".join(sub)),
            None,
            "one condition: a scalar (equality or glob) or one operator",
        )
    if field == "dispatch" and sub:
        kind = sub[0]
        if kind not in TARGET_STRUCTS:
            raise UsageError(f"unknown target {kind!r}: use {names()}")
        if len(sub) == 1:
            return Key(
                text,
                sensor,
                ("rules", rule, "dispatch", kind),
                None,
                (TARGET_STRUCTS[kind].__doc__ or "").strip(),
            )
        tf = _fields(TARGET_STRUCTS[kind])
        if len(sub) != 2 or sub[1] not in tf:
            raise UsageError(f"unknown key {text!r}: a {kind} target has " + ", ".join(tf))
        return Key(
            text,
            sensor,
            ("rules", rule, "dispatch", kind, sub[1]),
            tf[sub[1]],
            (TARGET_STRUCTS[kind].__doc__ or "").strip(),
        )
    if sub:
        raise UsageError(f"unknown key {text!r}: {field} has no parts")
    return Key(text, sensor, ("rules", rule, field), rf[field], _desc(rf[field]))


def all_keys(cat: Catalog) -> list[Key]:
    """Every key that has a value or a default in the loaded sensors."""
    keys = [parse_key(k) for k in CONFIG_KEYS]
    for s in cat.sensors.values():
        for f in ("description", "enabled"):
            keys.append(parse_key(f"ways.sensors.{s.name}.{f}"))
        for r in s.rules:
            base = f"ways.sensors.{s.name}.rules.{r}"
            raw = s.raw.get("rules", {}).get(r, {}) or {}
            for f in _fields(Rule):
                if f == "where":
                    for wk in raw.get("where") or {}:
                        keys.append(parse_key(f"{base}.where.{wk}"))
                elif f == "dispatch":
                    for kind, target in (raw.get("dispatch") or {}).items():
                        for tk in target or {}:
                            if kind in TARGET_STRUCTS:
                                keys.append(parse_key(f"{base}.dispatch.{kind}.{tk}"))
                else:
                    keys.append(parse_key(f"{base}.{f}"))
    return keys


def dig(data: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    node = data
    for k in path:
        if not isinstance(node, dict) or k not in node:
            return False, None
        node = node[k]
    return True, node


def layer_file(layer: str, sensor: str, project: str | None) -> str:
    if layer == "project":
        folder = roots.project_sensor_dir(os.path.abspath(project or index.project_dir()))
    else:
        folder = roots.user_sensor_dir()
    for ext in (".yaml", ".yml"):
        if os.path.exists(os.path.join(folder, sensor + ext)):
            return os.path.join(folder, sensor + ext)
    return os.path.join(folder, sensor + ".yaml")


def plain(value: Any) -> Any:
    """ruamel's round-trip types as plain Python (for JSON output and validation)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value
