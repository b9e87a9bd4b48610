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
(the dispatcher would refuse the dispatch); a `where` path no selected section can
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

import msgspec

from . import roots
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
from .targets import TARGETS
from .yamlread import position, read_yaml

_SECRET_NAME = re.compile(r"(auth|token|secret|key|password|passwd|cookie|session)", re.I)
_ENV_REF = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")
_ENV_USE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
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
    d = rule.spec.dispatch
    argv = getattr(d.target, "argv", None)
    if d.kind == "command" and isinstance(argv, list):
        secret = set(argv_secrets(argv))
        shown = [HIDDEN if i in secret else arg for i, arg in enumerate(argv)]
        return TARGETS[d.kind].destination(msgspec.structs.replace(d.target, argv=shown))
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


class _Lines:
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
    sensor: LoadedSensor, rule: LoadedRule, lines: _Lines | None = None
) -> list[Problem]:
    out = []
    lines = lines or _Lines()
    here: list[str | int] = ["rules", rule.name]

    def warn(message: str, keys: list[str | int] | None = None) -> None:
        line, column = lines.at(rule.path, here + (keys or []))
        out.append(
            Problem("warning", rule.path, line, message, sensor.name, rule.name, rule.layer, column)
        )

    if content_off_machine(rule):
        warn(
            f"may send session content off this machine, to {host(rule)} "
            f"({destination(rule)}); `fields: metadata` would send ids, names, times, "
            "sizes and keyed hashes instead"
        )
    if rule.spec.batch is not None and rule.spec.mode == "blocking":
        warn("batch has no effect on a blocking rule: the hook sends each record at once")
    if rule.spec.redact == "none":
        warn(f"redact: none dispatches unmasked session content to {destination(rule)}")
    kind = rule.spec.dispatch.kind
    if kind == "command" and getattr(rule.spec.dispatch.target, "input", "stdin") == "args":
        warn(
            "input: args puts each record on the command line, which every local user "
            "can read (/proc/<pid>/cmdline, ps) while the command runs, and a record over "
            "128 KiB cannot be passed at all (parked); input: stdin keeps records private",
            ["dispatch", kind, "input"],
        )
    for field, name in literal_secrets(rule):
        warn(
            f"{field}: {name!r} holds a literal secret; write it as ${{ENV_NAME}} and set "
            "the variable where the dispatcher runs",
            ["dispatch", kind, field, name],
        )
    for field, name, var in unset_variables(rule):
        warn(
            f"{field}: {name!r} uses ${{{var}}}, which is not set in this shell; the "
            "dispatcher refuses the dispatch unless it is set where the dispatcher runs",
            ["dispatch", kind, field, name],
        )
    for path in rule.spec.where or {}:
        why = impossible(path, rule.spec.sections)
        if why:
            warn(f"where {path!r}: {why}", ["where", path])
    if (
        kind == "syslog"
        and rule.spec.delivery == "at_least_once"
        and getattr(rule.spec.dispatch.target, "protocol", "") == "udp"
    ):
        warn(
            "delivery: at_least_once over syslog udp cannot see a lost datagram; "
            "use protocol: tcp or tls",
            ["dispatch", kind, "protocol"],
        )
    argv = getattr(rule.spec.dispatch.target, "argv", None)
    if rule.spec.dispatch.kind == "command" and isinstance(argv, list):
        for i in argv_secrets(argv):
            warn(
                f"argv[{i}] holds a literal secret, which every local user can read in the "
                "process list; pass it in `env:` as ${ENV_NAME} and read it in the command",
                ["dispatch", kind, "argv", i],
            )
    return out


def config_problems(path: str | None = None) -> list[Problem]:
    """An error for each key of config.yaml that settings.CONFIG_KEYS does not name."""
    path = path or roots.config_file()
    config, problem = read_config(path)
    if problem or not config:
        return []  # the loader reports a broken config.yaml itself
    known = [tuple(k.split(".")) for k in CONFIG_KEYS]
    lines = _Lines()
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
    lines = _Lines()
    for sensor in cat.sensors.values():
        for rule in sensor.rules.values():
            problems.extend(rule_warnings(sensor, rule, lines))
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
    lines = _Lines()
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
    import shutil
    import socket
    from urllib.parse import urlsplit

    target = rule.spec.dispatch.target
    path = getattr(target, "path", None)
    if rule.spec.dispatch.kind == "store":  # its default path is the data root's
        from .targets.store import database

        path = database(target)
    argv = getattr(target, "argv", None)
    url = getattr(target, "url", None) or getattr(target, "endpoint", None)
    host = getattr(target, "host", None)
    if isinstance(host, str) and getattr(target, "protocol", "tcp") != "udp":
        tls = getattr(target, "protocol", "tcp") == "tls"
        port = getattr(target, "port", None) or (6514 if tls else 514)
        url = f"tcp://{host}:{port}"  # syslog over tcp or tls: a connection, nothing sent
    if isinstance(path, str):
        folder = os.path.dirname(os.path.expanduser(path))
        folder = folder.split("{", 1)[0].rstrip("/") or "/"  # up to the first placeholder
        while not os.path.lexists(folder):
            folder = os.path.dirname(folder)
        if not os.path.isdir(folder):
            return f"{folder} is not a folder, so {path} cannot be created"
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"{folder} is not writable here, so {path} cannot be created"
    elif isinstance(argv, list) and argv:
        exe = argv[0] if "/" in argv[0] else shutil.which(argv[0])
        if not exe or not os.access(exe, os.X_OK) or os.path.isdir(exe):
            return f"{argv[0]} is not an executable here"
    elif isinstance(url, str):
        parts = urlsplit(url)
        host = parts.hostname or ""
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            socket.create_connection((host, port), timeout=timeout).close()
        except (OSError, ValueError) as exc:
            return f"{host}:{parts.port or ''} does not accept a connection ({exc})".replace(
                ":()", "()"
            )
    return None
