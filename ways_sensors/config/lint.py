"""Lint: the spec errors the loader found, plus the warnings of SPEC section 2.

Errors: every mistake of every file (the loader's, via specerrors.py), and each key of
config.yaml that settings.CONFIG_KEYS does not name (a typo like `project_sensor:`
would otherwise be ignored without a word).

Warnings, per rule: session content may leave the machine (the target's
`off_machine`: an http or otlp target whose host is not loopback, any command target;
unless the rule's `fields:` keeps no free text, as `metadata` does: projection.py),
naming the host; `redact: none` (and where the unmasked content goes, the target's
`destination`); a literal secret in one of the target's SECRET_FIELDS (http and otlp
headers, command env) or in a command's argv (what the masking finds in an argument,
or the argument after a flag named like one, `--token X`: every local user can read a
running process's argv); a `${VAR}` there whose variable is unset in the linting shell
(the dispatcher would hold the records); a `where` path no selected section can
have (recordpaths.py, naming the nearest real path); a `batch:` on a blocking rule,
which sends each record at once.

What is shown never quotes a secret: `destination` (the warnings, `ways sensors list`,
the tab) replaces each argument or part of a URL that holds one with `[secret]`.
Refused project sensors are reported by the loader itself. `lint_paths` validates
files alone (`ways sensors lint PATH`), through the loader's own per-file check.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

from .. import roots
from ..targets import TARGETS
from ..targets.base import hide
from .layers import (
    Catalog,
    LoadedSensor,
    Problem,
    Source,
    read_config,
    read_sensor,
    sensor_files,
    stem,
)
from .projection import carries_content
from .recordpaths import impossible
from .rules import LoadedRule
from .settings import CONFIG_KEYS
from .specerrors import nearest
from .yamlread import position, read_yaml

_SECRET_NAME = re.compile(r"(auth|token|secret|key|password|passwd|cookie|session)", re.I)
_ENV_REF = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")
_ENV_USE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRETISH = re.compile(r"^(Bearer|Basic|Token)\s+\S{8,}$|^[A-Za-z0-9_\-./+=]{20,}$")


def destination(rule: LoadedRule) -> str:
    """A short human description of where a rule's records go (the target says), with
    every secret in it hidden: it is shown in warnings, listings and the tab."""
    d = rule.spec.dispatch
    return hide(TARGETS[d.kind].destination(d.target))


def off_machine(rule: LoadedRule) -> bool:
    """True when the rule may send session content off this machine (the target says)."""
    d = rule.spec.dispatch
    return TARGETS[d.kind].off_machine(d.target)


def content_off_machine(rule: LoadedRule) -> bool:
    """True when session content may leave this machine: an off-machine target, and
    `fields:` that keeps some free text of the rule's sections."""
    return off_machine(rule) and carries_content(rule.spec.fields, rule.spec.sections)


def host(rule: LoadedRule) -> str:
    """The host records go to (`a command` for a command target)."""
    from urllib.parse import urlsplit

    target = rule.spec.dispatch.target
    url = getattr(target, "url", None) or getattr(target, "endpoint", None)
    if isinstance(url, str):
        return urlsplit(url).hostname or url
    return f"a {rule.spec.dispatch.kind}"


def literal_secrets(rule: LoadedRule) -> list[tuple[str, str]]:
    """(field, name) of each value in the target's SECRET_FIELDS that looks like a
    credential written out instead of a `${ENV_NAME}` reference."""
    d = rule.spec.dispatch
    out = []
    for field in TARGETS[d.kind].SECRET_FIELDS:
        values = getattr(d.target, field, None) or {}
        for name, value in values.items():
            if _ENV_REF.match(value) or "${" in value:
                continue
            if _SECRET_NAME.search(name) or _SECRETISH.match(value):
                out.append((field, name))
    return out


def unset_variables(rule: LoadedRule) -> list[tuple[str, str, str]]:
    """(field, name, VAR) of each `${VAR}` in the target's SECRET_FIELDS that this shell
    leaves unset."""
    d = rule.spec.dispatch
    out = []
    for field in TARGETS[d.kind].SECRET_FIELDS:
        for name, value in (getattr(d.target, field, None) or {}).items():
            for var in _ENV_USE.findall(str(value)):
                if var not in os.environ:
                    out.append((field, name, var))
    return out


class Lines:
    """The (line, column) of a path in a file, its YAML read once per file."""

    def __init__(self) -> None:
        self.nodes: dict[str, Any] = {}

    def at(
        self, path: str, keys: Sequence[str | int], value: bool = False
    ) -> tuple[int, int | None]:
        if path not in self.nodes:
            try:
                self.nodes[path] = read_yaml(path)[1]
            except (OSError, ValueError):
                self.nodes[path] = None
        node = self.nodes[path]
        if node is None:
            return 1, None
        return position(node, list(keys), value)


def rule_warnings(
    sensor: LoadedSensor, rule: LoadedRule, lines: Lines | None = None, consumer: bool = True
) -> list[Problem]:
    """The rule's warnings; without `consumer` only those that do not read its
    `dispatch` (a refused rule whose consumer is itself wrong: lintrefused.py)."""
    out = []
    lines = lines or Lines()
    here: list[str | int] = ["rules", rule.name]

    def warn(message: str, keys: list[str | int] | None = None) -> None:
        line, column = lines.at(rule.path, here + (keys or []))
        out.append(
            Problem("warning", rule.path, line, message, sensor.name, rule.name, rule.layer, column)
        )

    for path in rule.spec.where or {}:  # first: the likeliest to matter, a silent rule
        why = impossible(path, rule.spec.sections)
        if why:
            warn(f"where {path!r}: {why}", ["where", path])
    if rule.spec.batch is not None and rule.spec.mode == "blocking":
        warn("batch has no effect on a blocking rule: the hook sends each record at once")
    if consumer:
        _consumer_warnings(rule, warn)
    return out


def _consumer_warnings(rule: LoadedRule, warn: Any) -> None:
    """The warnings that read the rule's consumer (its `dispatch`), through `warn`."""
    if content_off_machine(rule):
        warn(
            f"may send session content off this machine, to {host(rule)} "
            f"({destination(rule)}); `fields: metadata` would send ids, names, times, "
            "sizes and keyed hashes instead"
        )
    if rule.spec.redact == "none":
        warn(f"redact: none dispatches unmasked session content to {destination(rule)}")
    kind = rule.spec.dispatch.kind
    for message, where in TARGETS[kind].warnings(rule.spec.dispatch.target, rule.at_least_once):
        warn(message, ["dispatch", kind, *where])  # the kind's own (targets/<kind>.py)
    for field, name in literal_secrets(rule):
        warn(
            f"{field}: {name!r} holds a literal secret; write it as ${{ENV_NAME}} and set "
            "the variable where the dispatcher runs",
            ["dispatch", kind, field, name],
        )
    for field, name, var in unset_variables(rule):
        warn(
            f"{field}: {name!r} uses ${{{var}}}, which is not set in this shell; unless it "
            "is set where the dispatcher runs, the rule's records are held (owed, retried, "
            "`ways status` names the error) and none is delivered",
            ["dispatch", kind, field, name],
        )


def config_problems(path: str | None = None) -> list[Problem]:
    """An error for each key of config.yaml that settings.CONFIG_KEYS does not name."""
    path = path or roots.config_file()
    config, problem = read_config(path)
    if problem or not config:
        return []  # the loader reports a broken config.yaml itself
    known = [tuple(k.split(".")) for k in CONFIG_KEYS]
    lines = Lines()
    out = []

    def walk(node: Any, keys: tuple[str, ...]) -> None:
        for key, value in node.items():
            here = (*keys, str(key))
            if here in known:
                continue
            if any(k[: len(here)] == here for k in known) and isinstance(value, dict):
                walk(value, here)
                continue
            dotted = ".".join(here)
            hint = nearest(dotted, CONFIG_KEYS)
            line, column = lines.at(path, list(here))
            message = f"unknown key `{dotted}` in config.yaml" + (
                f": did you mean `{hint}`?" if hint else f"; it knows {', '.join(CONFIG_KEYS)}"
            )
            out.append(Problem("error", path, line, message, column=column))

    walk(config, ())
    return out


def lint(cat: Catalog, config: bool = False) -> list[Problem]:
    """Every problem of the catalog: loader errors and refusals first, then rule warnings
    (with `config`, the user's config.yaml keys first of all)."""
    problems = config_problems() if config else []
    problems += cat.problems
    lines = Lines()
    for sensor in cat.sensors.values():
        for rule in sensor.rules.values():
            problems.extend(rule_warnings(sensor, rule, lines))
    from .lintrefused import warnings  # a refused file's rules warn too: one run, all

    problems += warnings(cat, lambda s, rule, consumer: rule_warnings(s, rule, lines, consumer))
    return problems


def lint_paths(paths: list[str]) -> Catalog:
    """Validate the given files (or the sensor files of given folders) alone, as if each
    were the only layer."""
    cat = Catalog(project="", project_allowed=False)
    files: list[str] = []
    for p in paths:
        files += sensor_files(p) if os.path.isdir(p) else [p]
    for path in files:
        got = read_sensor(path, None)
        if isinstance(got, list):
            cat.problems.extend(got)
            continue
        raw, _, sensor, wheres = got
        name = stem(path)
        rules = {
            n: LoadedRule(name, n, r, wheres[n], "file", path) for n, r in sensor.rules.items()
        }
        cat.sensors[name] = LoadedSensor(name, sensor, [Source("file", path)], rules, raw)
    return cat


def target_problems(cat: Catalog, timeout: float = 3.0) -> list[Problem]:
    """`--check-targets`: an error per rule whose consumer cannot be reached from here: a
    file target whose nearest existing folder is not writable, a command that is not an
    executable, an http/otlp endpoint that refuses a TCP connection (nothing is sent)."""
    out = []
    lines = Lines()
    for sensor in cat.sensors.values():
        for rule in sensor.rules.values():
            why = _unreachable(rule, timeout)
            if why:
                line, column = lines.at(rule.path, ["rules", rule.name, "dispatch"])
                out.append(
                    Problem(
                        "error",
                        rule.path,
                        line,
                        f"target check: {why}",
                        sensor.name,
                        rule.name,
                        rule.layer,
                        column,
                    )
                )
    return out


def _unreachable(rule: LoadedRule, timeout: float) -> str | None:
    d = rule.spec.dispatch
    return TARGETS[d.kind].unreachable(d.target, timeout)  # targets/<kind>.py checks its own
