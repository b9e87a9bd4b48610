"""A rule's preview: what it would have sent on a recorded session, nothing dispatched.

The session is the project's newest transcript, or the one named by id or path. The
agent's adapter replays it into section records (the same builder the dispatcher uses) and
each record the rule matches goes through the same `finish` as a real dispatch, so it
is masked and chained exactly as the consumer would receive it. Seeing a preview marks
the rule's preview seen (previews.py): `ways sensors test` and the sensors tab both
come through here, so the gate opens the same way from either surface.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .. import agents, index
from ..agents.kit import sessionfile
from ..config.layers import Catalog, LoadedSensor, load
from ..config.rules import LoadedRule
from ..dispatch import pricing
from ..errors import UsageError
from ..pipeline.stages import finish, match
from ..records import envelope
from ..state import previews


@dataclass(frozen=True)
class Preview:
    rule: str  # sensor/rule
    transcript: str
    lines: int
    malformed: int
    records: int  # records the session gave, before the rule's selection
    matched: dict[str, int]  # section -> records the rule selected
    sent: list[dict[str, Any]]  # what the consumer would receive, masked

    def as_json(self) -> dict[str, Any]:
        """`ways sensors test --json` (its docstring names the stable shape)."""
        return {
            "rule": self.rule,
            "transcript": self.transcript,
            "lines": self.lines,
            "malformed": self.malformed,
            "records": self.records,
            "matched": dict(self.matched),
            "sent": self.sent,
        }


def rule_of(cat: Catalog, spec: str) -> tuple[LoadedSensor, LoadedRule]:
    """The sensor and rule named `sensor/rule`; UsageError when there is none."""
    sensor_name, _, rule_name = spec.partition("/")
    sensor = cat.sensors.get(sensor_name)
    if sensor is None or not rule_name or rule_name not in sensor.rules:
        raise UsageError(
            f"no rule {spec!r}", hint="name it SENSOR/RULE; `ways sensors list` shows them"
        )
    return sensor, sensor.rules[rule_name]


def detect(path: str) -> str | None:
    """The agent whose session file `path` is, by the adapters that can tell
    (a Codex rollout, a Gemini CLI chat file); None for Claude Code's or unknown."""
    head = sessionfile.first_line(path, 1 << 16)  # b"" when unreadable; a FIFO: not waited on
    for name in agents.names():
        check = getattr(agents.adapter(name), "is_session_file", None)
        if check and check(path, head):
            return name
    return None


def adapter_for(agent: str | None, transcript: str | None) -> agents.Adapter:
    """The adapter named by `agent`, else the one that recognises the file, else the
    default (Claude Code)."""
    name = agent or (transcript and detect(transcript)) or agents.DEFAULT
    try:
        return agents.adapter(name)
    except KeyError:
        raise UsageError(f"no agent {name!r}", hint="one of " + ", ".join(agents.names())) from None


def transcript_for(
    session: str | None = None,
    transcript: str | None = None,
    adapter: agents.Adapter | None = None,
) -> str:
    """The transcript to replay: the path given, the session's, or the project's newest."""
    adapter = adapter or agents.adapter(agents.DEFAULT)
    path = transcript or adapter.find_session_file(index.project_dir(), session)
    if not path or not os.path.exists(path):
        where = f"session {session}" if session else f"project {index.project_dir()}"
        raise UsageError(
            f"no transcript found for {where}", hint="pass --transcript FILE or --session ID"
        )
    if not os.path.isfile(path):  # a FIFO or a device: never waited on nor read
        raise UsageError(f"{path} is not a regular file", hint="pass a session file")
    return path


def preview(
    rule: str,
    session: str | None = None,
    transcript: str | None = None,
    cat: Catalog | None = None,
    mark: bool = True,
    agent: str | None = None,
) -> Preview:
    """Replay the session through `rule` (sensor/rule) and mark its preview seen;
    `mark=False` leaves that to the caller, once it has shown the records (`seen`)."""
    cat = cat if cat is not None else load()
    _, loaded = rule_of(cat, rule)
    adapter = adapter_for(agent, transcript)
    path = transcript_for(session, transcript, adapter)
    replay = adapter.replay(path)
    matched: Counter[str] = Counter()
    sent: list[dict[str, Any]] = []
    total = 0
    prev = "0" * 64
    tally = pricing.Tally()  # replies priced as the dispatcher prices them
    for i, draft in enumerate(replay.drafts(), 1):
        total += 1
        tally.apply([draft])
        # without `identity`: the dispatcher adds it as it sends (fleet/identity.py)
        rec = envelope(draft, i, replay.session_id, index.project_dir())
        if not match(loaded, rec):
            continue
        matched[rec["section"]] += 1
        out, prev = finish(rec, loaded, len(sent) + 1, prev)
        sent.append(out)
    if mark:
        seen(rule)
    return Preview(
        rule, path, replay.stats.lines, replay.stats.malformed, total, dict(matched), sent
    )


def seen(rule: str) -> None:
    """Mark the rule's preview seen: enabling it is no longer refused."""
    previews.seen(rule)
