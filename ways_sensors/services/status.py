"""What `ways status` and the sensors tab show: one typed snapshot of the delivery state.

A snapshot holds every rule's counters (counters.py: the totals the dispatchers and
the blocking path add), rules that have counters but no longer exist ("gone"), the
live dispatchers (a session whose `dispatch.lock` someone holds), the sessions still
owed records, the dead-letter files with their counts, the redaction key's state, and
the last lines of the content-free events log, and the sensor files refused (a refused
file records nothing: `ways status` names it first and exits NOT_RECORDING). Reading
it takes no lock that a
dispatcher waits for, so the sensors tab can take one about once a second. Each rule's
health (health.py: records owed, last delivery, last error, dead letters) is read only
when asked (`health_threshold`): counting what is owed reads the journals.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from ..config import refusals
from ..config.layers import Catalog, Problem, load
from ..config.refusals import Refusal
from ..dispatch import metrics
from ..pipeline import deadletters
from ..state import counters
from ..state.layout import Layout, rule_key, rule_label, split_rule_key, split_rule_label
from .health import THRESHOLD_S as THRESHOLD_S
from .health import Health, judge
from .owed import scan

KINDS = counters.KINDS


@dataclass(frozen=True)
class RuleStatus:
    """One rule's totals. `enabled`, `mode` and `delivery` are None for a rule that has
    counters but is not loaded: gone from every sensor file, or in a refused one."""

    rule: str  # sensor/rule
    enabled: bool | None
    mode: str | None
    delivery: str | None
    counters: dict[str, int]
    refused: bool = False  # not loaded because its sensor's file is refused, not gone

    @property
    def state(self) -> str:
        """`on`, `off`, `refused` (its file is: `ways sensors lint`) or `gone`."""
        if self.enabled is None:
            return "refused" if self.refused else "gone"
        return "on" if self.enabled else "off"

    def as_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "enabled": self.enabled,
            "mode": self.mode,
            "delivery": self.delivery,
            "counters": dict(self.counters),
            "state": self.state,
        }


@dataclass(frozen=True)
class Dispatcher:
    session: str
    pid: int | None
    age_s: float

    def as_json(self) -> dict[str, Any]:
        return {"session": self.session, "pid": self.pid, "age_s": self.age_s}


@dataclass(frozen=True)
class DeadLetters:
    rule: str  # sensor/rule
    path: str
    count: int

    def as_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "path": self.path, "count": self.count}


@dataclass(frozen=True)
class Snapshot:
    rules: list[RuleStatus]
    dispatchers: list[Dispatcher]
    pending_sessions: list[str]
    dead_letters: list[DeadLetters]
    events_log: str
    redaction_key: str  # "ok", "missing (created on first use)" or "refused: <why>"
    events: list[str] = field(default_factory=list)  # the last lines, oldest first
    refused: list[Refusal] = field(default_factory=list)  # sensor files refused (refusals.py)
    config: list[Problem] = field(default_factory=list)  # config.yaml keys ways does not know
    health: dict[str, Health] = field(default_factory=dict)  # sensor/rule -> its health
    now: float = 0.0  # when the health was read (epoch seconds)

    @property
    def unhealthy(self) -> list[str]:
        """The rules health.py calls unhealthy (`ways status` exits UNHEALTHY)."""
        return [rule for rule, h in self.health.items() if h.problems]

    @property
    def not_recording(self) -> list[str]:
        """Why `ways status` exits NOT_RECORDING: an enabled sensor file refused, or a
        rule gone (counted, no longer defined) while a session's dispatcher runs."""
        why = [f"{r.file}:{r.line} refused" for r in self.refused if r.enabled]
        why += [f"{p.path}:{p.line} unknown key" for p in self.config]
        if self.dispatchers:
            why += [f"{r.rule} gone" for r in self.rules if r.state == "gone"]
        return why

    def refused_line(self) -> str | None:
        """The first line of `ways status` and the tab when a file is refused."""
        if not self.refused:
            return None
        first: dict[str, int] = {}  # a file with several mistakes is one file refused
        for r in self.refused:
            first[r.file] = min(first.get(r.file, r.line), r.line)
        files = ", ".join(f"{f}:{line}" for f, line in first.items())
        return (
            f"{len(first)} sensor file(s) refused, recording nothing they define: "
            f"{files}; `ways sensors lint` shows why"
        )

    def config_lines(self) -> list[str]:
        """One line per config.yaml key ways does not know: ignored, so what it meant
        to turn on (a witness, a metrics file) is off; loud as a refused file is."""
        return [f"{p.path}:{p.line}: {p.message}; ignored" for p in self.config]

    def rule(self, rule_id: str) -> RuleStatus | None:
        """The status of `sensor/rule`, or None."""
        return next((r for r in self.rules if r.rule == rule_id), None)

    def dead(self, rule_id: str) -> int:
        return sum(d.count for d in self.dead_letters if d.rule == rule_id)

    def as_json(self) -> dict[str, Any]:
        """`ways status --json` (its docstring names the stable shape)."""
        rules = [r.as_json() for r in self.rules]
        for r in rules if self.health else ():
            h = self.health.get(r["rule"])
            r["health"] = h.as_json(self.now) if h is not None else None
        return {
            "rules": rules,
            "dispatchers": [d.as_json() for d in self.dispatchers],
            "pending_sessions": list(self.pending_sessions),
            "dead_letters": [d.as_json() for d in self.dead_letters],
            "events_log": self.events_log,
            "redaction_key": self.redaction_key,
            "refused": [r.as_json() for r in self.refused],
            "config_problems": [p.as_json() for p in self.config],
            "not_recording": self.not_recording,
            **({"unhealthy": self.unhealthy} if self.health else {}),
        }


def live_dispatchers(layout: Layout | None = None) -> list[Dispatcher]:
    """Sessions whose dispatcher holds its lock right now (metrics.py finds them)."""
    return [
        Dispatcher(d["session"], d["pid"], d["age_s"]) for d in metrics.live_dispatchers(layout)
    ]


def rule_statuses(cat: Catalog, layout: Layout | None = None) -> list[RuleStatus]:
    """Every loaded rule in catalog order, then every counted rule not loaded: refused
    with its sensor's file, or gone."""
    totals = counters.read_all(layout)
    rules: list[RuleStatus] = []
    seen = set()
    for s in cat.sensors.values():
        for r in s.rules.values():
            rid = r.key
            seen.add(rid)
            rules.append(
                RuleStatus(
                    r.label,
                    bool(s.spec.enabled and r.spec.enabled),
                    r.spec.mode,
                    r.spec.delivery,
                    {k: totals.get(rid, {}).get(k, 0) for k in KINDS},
                )
            )
    refused = {r.sensor for r in refusals.of(cat)}
    for rid, c in totals.items():
        if rid not in seen:
            sensor, name = split_rule_key(rid)
            counts = {k: c.get(k, 0) for k in KINDS}
            rules.append(
                RuleStatus(rule_label(sensor, name), None, None, None, counts, sensor in refused)
            )
    return rules


def dead_letters(layout: Layout | None = None, cached: bool = False) -> list[DeadLetters]:
    """Every dead-letter file with its parked records. `cached` counts a file that only
    grew from where it was last seen (metrics.py): the tab asks every second."""
    if cached:
        found = {
            rid: (deadletters.deadletter_path(*split_rule_key(rid), layout=layout), n)
            for rid, n in metrics.dead_letter_counts(layout).items()
        }
    else:
        found = deadletters.dead_letters(layout)
    return [
        DeadLetters(rule_label(*split_rule_key(rid)), path, count)
        for rid, (path, count) in found.items()
    ]


TAIL_BYTES = 64 * 1024


def tail(path: str, lines: int) -> list[str]:
    """The last `lines` lines of a file, reading at most its last TAIL_BYTES: the events
    log grows for as long as the install lives, and the tab reads it every second."""
    if lines <= 0:
        return []
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - TAIL_BYTES))
            data = f.read(TAIL_BYTES)
    except OSError:
        return []
    text = data.decode("utf-8", "replace").splitlines()
    if size > TAIL_BYTES and text:
        text = text[1:]  # the first line was cut
    return text[-lines:]


def redaction_key() -> str:
    """ "ok", "missing (created on first use)" or "refused: <why>"; creates nothing."""
    from ..redact import key_status

    return key_status()


def snapshot(
    cat: Catalog | None = None,
    events_tail: int = 0,
    layout: Layout | None = None,
    cached: bool = False,
    health_threshold: float | None = None,
) -> Snapshot:
    """The state now; `cat` defaults to the layers as the hook loads them, `events_tail`
    asks for the last lines of events.log, `cached` counts dead letters incrementally,
    `health_threshold` (seconds) asks for every rule's health (health.py)."""
    cat = cat if cat is not None else load()
    layout = layout or Layout()
    dead = dead_letters(layout, cached)
    health: dict[str, Health] = {}
    now = time.time()
    if health_threshold is not None:
        health = rule_health(cat, layout, dead, health_threshold, now)
    return Snapshot(
        rules=rule_statuses(cat, layout),
        dispatchers=live_dispatchers(layout),
        pending_sessions=layout.pending_sessions(),
        dead_letters=dead,
        events_log=layout.events_log(),
        redaction_key=redaction_key(),
        events=tail(layout.events_log(), events_tail),
        refused=refusals.of(cat),
        config=config_problems(),
        health=health,
        now=now,
    )


def config_problems() -> list[Problem]:
    """lint's errors for config.yaml: each key ways does not know (`ways.witnes`). lint
    (its did-you-mean, its line finder) is imported only when a key is unknown: every
    `ways status` and each refresh of the tab asks."""
    from ..config.layers import read_config
    from ..config.settings import CONFIG_KEYS

    config, problem = read_config()
    if problem or not config or _known(config, [tuple(k.split(".")) for k in CONFIG_KEYS]):
        return []
    from ..config.lint import config_problems as unknown_keys

    return unknown_keys()


def _known(node: dict[str, Any], known: list[tuple[str, ...]], at: tuple[str, ...] = ()) -> bool:
    """Every key of `node` is a key of config.yaml ways knows (lint.config_problems's walk)."""
    for key, value in node.items():
        here = (*at, str(key))
        if here in known:
            continue
        deeper = any(k[: len(here)] == here for k in known)
        if not (deeper and isinstance(value, dict) and _known(value, known, here)):
            return False
    return True


def rule_health(
    cat: Catalog, layout: Layout, dead: list[DeadLetters], threshold: float, now: float
) -> dict[str, Health]:
    """{sensor/rule: Health} of every loaded rule, and of every rule with dead letters."""
    loaded = [r for s in cat.sensors.values() for r in s.rules.values()]
    owed = scan(loaded, layout)
    marks = counters.read_health(layout)
    parked = {d.rule: 0 for d in dead}
    for d in dead:
        parked[d.rule] += d.count
    out = {
        r.label: judge(owed.get(r.key), marks.get(r.key), parked.get(r.label, 0), threshold, now)
        for r in loaded
    }
    for rule, n in parked.items():
        if rule not in out:  # a rule gone, its dead letters still waiting
            sensor, name = split_rule_label(rule)
            out[rule] = judge(None, marks.get(rule_key(sensor, name)), n, threshold, now)
    return out
