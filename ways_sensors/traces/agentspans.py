"""The agent spans of a session's trace: `invoke_agent` for the session (its root), for a
resumed run of it, and for each subagent, nested under the tool call that started it
(spans.py's docstring draws the whole trace and how ids are derived).

A subagent's span opens at its `subagent` start and closes at its stop; the session's
root (or a resumed run's span) closes at `session_end`, which also closes, marked
`ways.unfinished`, every tool call and subagent whose end never came. `AgentSpans` is
the half of spans.Spans that makes these; the per-record spans (tool calls, chats) are
spans.py's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..index import DEFAULT
from . import messages as io
from .attrs import attributes as _attr_pairs
from .ids import span_id
from .state import State

MAX_OPEN = 1024  # tool calls and subagents open at once: older ones are forgotten


class AgentSpans:
    """Subagent, run and root spans; mixed into spans.Spans."""

    state: State
    _sid: str
    _root: str
    _common: Callable[[dict[str, Any], str], list[tuple[str, Any]]]
    _span: Callable[..., dict[str, Any]]
    _parent: Callable[[str], str]
    _tool: Callable[[dict[str, Any], dict[str, Any], int], dict[str, Any]]

    def _subagent(
        self, rec: dict[str, Any], data: dict[str, Any], now: int
    ) -> list[dict[str, Any]]:
        aid = data.get("agent_id") if isinstance(data.get("agent_id"), str) else ""
        if not aid:
            return []
        agents = self.state.agents
        if data.get("phase") == "start":
            if len(agents) >= MAX_OPEN:
                agents.pop(next(iter(agents)))
            # the call whose result named it (an async subagent), else the newest open
            # agent-kind call of the parent (the main agent) started it
            spawner = self.state.spawned.pop(aid, None) or next(
                (
                    t
                    for t, c in reversed(self.state.calls.items())
                    if c.get("kind") == "agent" and not c.get("ctx")
                ),
                None,
            )
            agents[aid] = {"start": now, "tool": spawner, "type": data.get("agent_type")}
            self.state.turns[aid] = now
            return []
        return [self._agent_span(rec, aid, agents.pop(aid, None), now, data)]

    def _agent_span(
        self,
        rec: dict[str, Any],
        aid: str,
        opened: dict[str, Any] | None,
        now: int,
        data: dict[str, Any],
        unfinished: bool = False,
    ) -> dict[str, Any]:
        kind = (opened or {}).get("type") or data.get("agent_type") or rec.get("agent_type")
        tool = (opened or {}).get("tool") or self.state.spawned.pop(aid, None)
        # an async subagent outlives its call (which returned first, naming it): under
        # the agent instead, naming the call, so no span ends after its parent
        returned = bool(tool) and tool not in self.state.calls
        parent = span_id(self._sid, "tool", tool) if tool and not returned else self._parent("")
        attrs = [
            *self._common(rec, "invoke_agent"),
            ("gen_ai.agent.id", aid),
            ("gen_ai.agent.name", kind),
            ("ways.launched_by.tool_call_id", tool if returned else None),
            ("ways.unfinished", True if unfinished else None),
            *io.agent(None, None, None),
        ]
        start = (opened or {}).get("start") or now
        self.state.turns.pop(aid, None)
        return self._span(
            rec, ("agent", aid), f"invoke_agent {kind or 'subagent'}", start, now, attrs, parent
        )

    def _end(self, rec: dict[str, Any], data: dict[str, Any], now: int) -> list[dict[str, Any]]:
        st = self.state
        out: list[dict[str, Any]] = []
        for tid, call in list(st.calls.items()):  # calls whose result never came
            fake = {**rec, "agent_id": call.get("ctx") or None}
            span = self._tool(fake, {"tool_use_id": tid, "tool_name": call.get("name")}, now)
            span["attributes"] += _attr_pairs([("ways.unfinished", True)])
            out.append(span)
        for aid, opened in list(st.agents.items()):
            out.append(self._agent_span(rec, aid, opened, now, {}, unfinished=True))
        st.agents.clear()
        agent = rec.get("agent") or DEFAULT
        attrs = [
            *self._common(rec, "invoke_agent"),
            ("gen_ai.agent.name", agent),
            ("ways.session.reason", data.get("reason")),
            ("ways.session.synthesized", True if data.get("synthesized") else None),
        ]
        attrs += io.agent(st.first, st.last, data.get("cost"), root=True)  # its running cost
        st.first = st.last = None  # a resumed run's span has its own
        if st.dropped:
            attrs.append(("ways.events_dropped", st.dropped))
        events = [e for q in st.events.values() for e in q] or None
        st.events.clear()
        if st.run:  # a resumed run: the root of a trace of its own (spans.py's docstring)
            attrs.append(("ways.session.resumed", True))
            key, start, parent = ("run", st.run), st.run_start or now, None
        else:
            key, start, parent = ("root", ""), st.start or now, None
        out.append(
            self._span(
                rec,
                key,
                f"invoke_agent {agent}",
                start,
                now,
                attrs,
                parent,
                events=events,
            )
        )
        return out
