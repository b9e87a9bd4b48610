"""Lint: the spec errors the loader found, plus the warnings of SPEC section 2.

Warnings, per rule: session content may leave the machine (an http or otlp target
whose host is not loopback, any command target), `redact: none` (and where the
unmasked content goes), a header holding a literal secret. Refused project sensors
are reported by the loader itself.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from .layers import Catalog, LoadedRule, LoadedSensor, Problem

_SECRET_HEADER = re.compile(r"(auth|token|secret|key|password|passwd|cookie|session)", re.I)
_ENV_REF = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")
_SECRETISH = re.compile(r"^(Bearer|Basic|Token)\s+\S{8,}$|^[A-Za-z0-9_\-./+=]{20,}$")


def is_loopback_url(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def destination(rule: LoadedRule) -> str:
    """A short human description of where a rule's records go."""
    d = rule.rule.dispatch
    t = d.target
    if d.kind == "file":
        return f"file {t.path}"
    if d.kind in ("http", "otlp"):
        return f"{d.kind} {getattr(t, 'url', None) or getattr(t, 'endpoint', '')}"
    return "command " + " ".join(t.argv)


def off_machine(rule: LoadedRule) -> bool:
    """True when the rule may send session content off this machine."""
    d = rule.rule.dispatch
    if d.kind == "command":
        return True
    if d.kind == "http":
        return not is_loopback_url(d.http.url)
    if d.kind == "otlp":
        return not is_loopback_url(d.otlp.endpoint)
    return False


def rule_warnings(sensor: LoadedSensor, rule: LoadedRule) -> list[Problem]:
    out = []

    def warn(message: str) -> None:
        out.append(Problem("warning", rule.path, 1, message, sensor.name, rule.name, rule.layer))

    r = rule.rule
    if off_machine(rule):
        if r.dispatch.kind == "command":
            warn(
                f"sends session content to a command ({' '.join(r.dispatch.command.argv)}), "
                "which may forward it off this machine"
            )
        else:
            warn(f"sends session content off this machine to {destination(rule)}")
    if r.redact == "none":
        warn(f"redact: none dispatches unmasked session content to {destination(rule)}")
    headers = {}
    if r.dispatch.kind in ("http", "otlp"):
        headers = r.dispatch.target.headers
    for name, value in headers.items():
        if _ENV_REF.match(value) or "${" in value:
            continue
        if _SECRET_HEADER.search(name) or _SECRETISH.match(value):
            warn(
                f"header {name!r} holds a literal secret; write it as ${{ENV_NAME}} and set "
                "the variable where the dispatcher runs"
            )
    return out


def lint(cat: Catalog) -> list[Problem]:
    """Every problem of the catalog: loader errors and refusals first, then rule warnings."""
    problems = list(cat.problems)
    for sensor in cat.sensors.values():
        for rule in sensor.rules.values():
            problems.extend(rule_warnings(sensor, rule))
    return problems
