"""Where a rule's span state waits between batches, so that a batch sent again is the
same spans.

`sessions/<sid>/cursors/<key>.traces` (0600, in the session's 0700 folder; removed with
the session by retention):

    {"after": {"<rule_seq>": <spans.State as a dict>, ...}}

`after[N]` is the state once the records up to rule_seq N were turned into spans. A
batch whose first record is N+1 starts from `after[N]`, so an at-least-once resend of
that batch (the worker keeps it whole across a crash) starts from the same state and
gives the same spans; the states of the last KEEP batches are kept. A batch that starts
where no state was kept (the first, or the state file gone) starts from the newest
state before it, else from nothing: its spans may then lack a start time or a parent,
never the records themselves.

The state holds the masked text a span still needs (the arguments of tool calls whose
results have not come, the events waiting for their reply): session content at rest,
like the journal, bounded by spans.MAX_OPEN, MAX_EVENTS and MAX_TEXT.
"""

from __future__ import annotations

from typing import Any

from ..state.layout import Layout, rule_key
from ..state.session import read_json, write_json

KEEP = 8


class State:
    """What a span needs from earlier records, as a JSON-able dict (state.py stores it):
    the root's start, open tool calls and subagents, each agent's turn start and the
    events waiting for its next chat span."""

    def __init__(self, raw: Any = None) -> None:
        d: dict[str, Any] = raw if isinstance(raw, dict) else {}

        def table(key: str) -> dict[str, Any]:
            v = d.get(key)
            return v if isinstance(v, dict) else {}

        def number(key: str) -> int:
            v = d.get(key)
            return v if isinstance(v, int) and not isinstance(v, bool) else 0

        self.start = number("start")
        self.calls = table("calls")
        self.agents = table("agents")
        self.turns = table("turns")
        self.events = table("events")
        self.dropped = number("dropped")
        run = d.get("run")
        self.run = run if isinstance(run, str) else ""  # a resumed run's key (spans.py)
        self.run_start = number("run_start")
        self.spawned = table("spawned")  # an async subagent's id -> the call that launched it
        self.prompts = table("prompts")  # each agent's turn prompt: its chat spans' input

        def words(key: str) -> str | None:
            v = d.get(key)
            return v if isinstance(v, str) else None

        self.first = words("first")  # the run's first prompt and last reply: its agent
        self.last = words("last")  # span's input and output (traces/messages.py)

    def dump(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "calls": self.calls,
            "agents": self.agents,
            "turns": self.turns,
            "events": self.events,
            "dropped": self.dropped,
            "run": self.run,
            "run_start": self.run_start,
            "spawned": self.spawned,
            "prompts": self.prompts,
            "first": self.first,
            "last": self.last,
        }


def path(layout: Layout, session_id: str, sensor: str, rule: str) -> str:
    return layout.cursors_dir(session_id) + "/" + rule_key(sensor, rule) + ".traces"


def _snapshots(file: str) -> dict[int, Any]:
    raw = read_json(file, {})
    after = raw.get("after") if isinstance(raw, dict) else None
    out: dict[int, Any] = {}
    if isinstance(after, dict):
        for k, v in after.items():
            try:
                out[int(k)] = v
            except ValueError:
                continue
    return out


def before(file: str, first_rule_seq: int | None) -> State:
    """The state in which the record `first_rule_seq` is to be read."""
    if not isinstance(first_rule_seq, int) or first_rule_seq <= 1:
        return State()
    snaps = _snapshots(file)
    earlier = [n for n in snaps if n < first_rule_seq]
    return State(snaps[max(earlier)]) if earlier else State()


def save(file: str, last_rule_seq: int | None, state: State) -> None:
    """Keep `state` as the state after `last_rule_seq` (and the KEEP - 1 before it)."""
    if not isinstance(last_rule_seq, int):
        return
    snaps = _snapshots(file)
    snaps[last_rule_seq] = state.dump()
    kept = sorted(snaps)[-KEEP:]
    write_json(file, {"after": {str(n): snaps[n] for n in kept}})
