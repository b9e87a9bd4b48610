"""Lint: the spec errors the loader found, plus the warnings of SPEC section 2.

Warnings, per rule: session content may leave the machine (the target's
`off_machine`: an http or otlp target whose host is not loopback, any command target;
unless the rule's `fields:` keeps no free text, as `metadata` does: projection.py),
naming the host; `redact: none` (and where the unmasked content goes, the target's
`destination`); a literal secret in one of the target's SECRET_FIELDS (http and otlp
headers, command env) or in a command's argv (what the masking finds in an argument,
or the argument after a flag named like one, `--token X`: every local user can read a
running process's argv); a `batch:` on a blocking rule, which sends each record at once.

What is shown never quotes a secret: `destination` (the warnings, `ways sensors list`,
the tab) replaces each argument or part of a URL that holds one with `[secret]`.
Refused project sensors are reported by the loader itself. `lint_paths` validates
files alone (`ways sensors lint PATH`), through the loader's own per-file check.
"""

from __future__ import annotations

import os
import re

import msgspec

from .layers import (
    Catalog,
    LoadedRule,
    LoadedSensor,
    Problem,
    Source,
    read_sensor,
    sensor_files,
    stem,
)
from .projection import carries_content
from .targets import TARGETS

_SECRET_NAME = re.compile(r"(auth|token|secret|key|password|passwd|cookie|session)", re.I)
_ENV_REF = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")
_SECRETISH = re.compile(r"^(Bearer|Basic|Token)\s+\S{8,}$|^[A-Za-z0-9_\-./+=]{20,}$")


_SECRET_FLAG = re.compile(
    r"^--?[A-Za-z0-9_-]*(token|secret|passw(or)?d|api[-_]?key|auth|credential)[A-Za-z0-9_-]*$",
    re.I,
)
HIDDEN = "[secret]"


def hide(text: str) -> str:
    """`text` with each secret the masking finds (redact.find: spans, no key needed)
    replaced by HIDDEN."""
    from .redact import find

    for start, end, _ in sorted(find(text), reverse=True):
        text = text[:start] + HIDDEN + text[end:]
    return text


def argv_secrets(argv: list[str]) -> list[int]:
    """Indexes of the arguments holding a literal secret: one the masking finds in it,
    or the value after a flag named like a secret (`--token X`); `${...}` is not one."""
    out = []
    for i, arg in enumerate(argv):
        if "${" in arg:
            continue
        after_flag = i > 0 and bool(_SECRET_FLAG.match(argv[i - 1])) and not arg.startswith("-")
        if after_flag or hide(arg) != arg:
            out.append(i)
    return out


def destination(rule: LoadedRule) -> str:
    """A short human description of where a rule's records go (the target says), with
    every secret in it hidden: it is shown in warnings, listings and the tab."""
    d = rule.rule.dispatch
    argv = getattr(d.target, "argv", None)
    if d.kind == "command" and isinstance(argv, list):
        secret = set(argv_secrets(argv))
        shown = [HIDDEN if i in secret else arg for i, arg in enumerate(argv)]
        return TARGETS[d.kind].destination(msgspec.structs.replace(d.target, argv=shown))
    return hide(TARGETS[d.kind].destination(d.target))


def off_machine(rule: LoadedRule) -> bool:
    """True when the rule may send session content off this machine (the target says)."""
    d = rule.rule.dispatch
    return TARGETS[d.kind].off_machine(d.target)


def content_off_machine(rule: LoadedRule) -> bool:
    """True when session content may leave this machine: an off-machine target, and
    `fields:` that keeps some free text of the rule's sections."""
    return off_machine(rule) and carries_content(rule.rule.fields, rule.rule.sections)


def host(rule: LoadedRule) -> str:
    """The host records go to (`a command` for a command target)."""
    from urllib.parse import urlsplit

    target = rule.rule.dispatch.target
    url = getattr(target, "url", None) or getattr(target, "endpoint", None)
    if isinstance(url, str):
        return urlsplit(url).hostname or url
    return f"a {rule.rule.dispatch.kind}"


def literal_secrets(rule: LoadedRule) -> list[tuple[str, str]]:
    """(field, name) of each value in the target's SECRET_FIELDS that looks like a
    credential written out instead of a `${ENV_NAME}` reference."""
    d = rule.rule.dispatch
    out = []
    for field in TARGETS[d.kind].SECRET_FIELDS:
        values = getattr(d.target, field, None) or {}
        for name, value in values.items():
            if _ENV_REF.match(value) or "${" in value:
                continue
            if _SECRET_NAME.search(name) or _SECRETISH.match(value):
                out.append((field, name))
    return out


def rule_warnings(sensor: LoadedSensor, rule: LoadedRule) -> list[Problem]:
    out = []

    def warn(message: str) -> None:
        out.append(Problem("warning", rule.path, 1, message, sensor.name, rule.name, rule.layer))

    if content_off_machine(rule):
        warn(
            f"may send session content off this machine, to {host(rule)} "
            f"({destination(rule)}); `fields: metadata` would send ids, names, times, "
            "sizes and keyed hashes instead"
        )
    if rule.rule.batch is not None and rule.rule.mode == "blocking":
        warn("batch has no effect on a blocking rule: the hook sends each record at once")
    if rule.rule.redact == "none":
        warn(f"redact: none dispatches unmasked session content to {destination(rule)}")
    for field, name in literal_secrets(rule):
        warn(
            f"{field}: {name!r} holds a literal secret; write it as ${{ENV_NAME}} and set "
            "the variable where the dispatcher runs"
        )
    argv = getattr(rule.rule.dispatch.target, "argv", None)
    if rule.rule.dispatch.kind == "command" and isinstance(argv, list):
        for i in argv_secrets(argv):
            warn(
                f"argv[{i}] holds a literal secret, which every local user can read in the "
                "process list; pass it in `env:` as ${ENV_NAME} and read it in the command"
            )
    return out


def lint(cat: Catalog) -> list[Problem]:
    """Every problem of the catalog: loader errors and refusals first, then rule warnings."""
    problems = list(cat.problems)
    for sensor in cat.sensors.values():
        for rule in sensor.rules.values():
            problems.extend(rule_warnings(sensor, rule))
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
        if isinstance(got, Problem):
            cat.problems.append(got)
            continue
        raw, _, sensor, wheres = got
        name = stem(path)
        rules = {n: LoadedRule(n, r, wheres[n], "file", path) for n, r in sensor.rules.items()}
        cat.sensors[name] = LoadedSensor(name, sensor, [Source("file", path)], rules, raw)
    return cat
