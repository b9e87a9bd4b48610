"""Records -> OpenTelemetry GenAI spans (semantic conventions for generative AI, 1.37).

One trace per run of the client (a `claude -p`, a resumed session), grouped into the
session by `session.id` and `gen_ai.conversation.id`, as Phoenix and Langfuse group
sessions: a root sent at a run's end cannot cover a later run (a span id never
carries two contents), so each run has a root that truly covers it, and no span ends
after its parent. Its spans, in OTLP's JSON mapping (ids as lowercase hex):

    invoke_agent {agent}      the first run: from its first record (session_start) to
                              its session_end, emitted at the end; the parent of all
    invoke_agent {agent}      a resumed run (a session_start with source `resume`: a new
                              client process): to that run's session_end, the root of
                              its own trace and the parent of the run's spans
    invoke_agent {type}       a subagent, from its `subagent` start to its stop, nested
                              under the execute_tool span of the call that started it
                              (the newest open `agent`-kind call of its parent); an
                              async one (its call returned first, naming it) under its
                              parent agent, `ways.launched_by.tool_call_id` the call
    chat {model}              one per assistant_response: from the turn's start (its
                              prompt, else the previous reply) to the reply; tokens,
                              finish reason and cost
    execute_tool {tool}       one per tool call, from its tool_call to its tool_result;
                              an error status and `error.type` on failure

user_prompt, queued_message, permission, notification, compaction and error records
become span events of the next `chat` span of the same agent (those left at the end,
of the root span). Every span carries `ways.rule_seq` and `ways.chain.hash` of the
record that closed it (events: of their own record), so a trace can be checked against
the hash-chained log.

Ids are derived from the session and the record, never random:

    trace_id  = SHA-256("ways-trace\\0" + session_id)[:16]; a resumed run's:
                SHA-256("ways-trace\\0" + session_id + "\\0run\\0" + run key)[:16]
    span_id   = SHA-256("ways-span\\0" + session_id + "\\0" + kind + "\\0" + key)[:8]
                kind/key: root/"", tool/<tool_use_id>, agent/<agent_id>, chat/<seq or
                rule_seq>, run/<seq or rule_seq of the resumed run's session_start>

so a batch sent again (at_least_once after a crash) repeats the same spans. A record
that carries the client's trace (`traceparent`: the session joined it, context.py) gives
its span that trace id instead, and the root span (and each run's) is parented under
the client's span; span ids stay as above. A span whose end never came (a killed
session) ends at the session_end, with `ways.unfinished: true`.

What the spans hold of the text (prompt, reply, tool arguments and results) is what the
rule's projection and masking left in the records: a record projected to metadata
gives spans without text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..agents.providers import provider as _provider
from ..index import DEFAULT
from . import messages as io
from .agentspans import MAX_OPEN, AgentSpans
from .attrs import attributes as _attr_pairs
from .attrs import legacy_names
from .attrs import seal as _seal
from .attrs import text as _text
from .clock import Clock
from .context import parse as _client
from .ids import span_id, trace_id
from .state import State

SEMCONV = "1.37.0"
EVENT_SECTIONS = frozenset(
    {"user_prompt", "queued_message", "permission", "notification", "compaction", "error"}
)
KIND_INTERNAL, KIND_CLIENT = 1, 3
STATUS_ERROR = 2
MAX_EVENTS = 128  # events waiting for their span, per agent: more are counted, not kept


def _ctx(record: dict[str, Any]) -> str:
    aid = record.get("agent_id")
    return aid if isinstance(aid, str) and aid else ""


class Spans(AgentSpans):
    """Turns one rule's records of one session into spans, carrying `State` along."""

    def __init__(self, session_id: str, state: State, legacy: bool | None = None) -> None:
        self._sid = session_id
        self.state = state
        self.legacy = legacy_names() if legacy is None else legacy
        self._trace = ("", trace_id(session_id))  # (run, its trace): derived once a run
        self._root = span_id(session_id, "root")
        self._clock = Clock()

    def of(self, records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for rec in records:
            out += self._one(rec)
        return out

    # --- per section ------------------------------------------------------------------

    def _one(self, rec: dict[str, Any]) -> list[dict[str, Any]]:
        section = rec.get("section")
        raw = rec.get("data")
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        now = self._clock(rec.get("timestamp"))
        st = self.state
        if not st.start and now:
            st.start = now
        ctx = _ctx(rec)
        if section == "session_start":
            if data.get("source") == "resume":  # a new process of a session that ended
                st.run, st.run_start = self._key(rec), now
            return []  # (a compaction's session_start is no new start of the root)
        if section == "user_prompt":
            st.turns[ctx] = now
            st.prompts[ctx] = io.clip(data.get("prompt"))  # the input of the turn's chats
            if not ctx and st.first is None:
                st.first = st.prompts[ctx]  # the run's first input (its agent span's)
        if section in EVENT_SECTIONS:
            self._wait(ctx, rec, data, now)
            return []
        if section == "tool_call":
            self._open_call(rec, data, now)
            return []
        if section == "tool_result":
            return [self._tool(rec, data, now)]
        if section == "assistant_response":
            span = self._chat(rec, data, now)
            st.turns[ctx] = now  # the next reply of this agent begins here at the latest
            return [span]
        if section == "subagent":
            return self._subagent(rec, data, now)
        if section == "session_end":
            return self._end(rec, data, now)
        return []

    def _wait(self, ctx: str, rec: dict[str, Any], data: dict[str, Any], now: int) -> None:
        queue = self.state.events.setdefault(ctx, [])
        if len(queue) >= MAX_EVENTS:
            self.state.dropped += 1
            return
        attrs: list[tuple[str, Any]] = [("ways.section", rec.get("section"))]
        text = data.get("prompt") if rec.get("section") == "user_prompt" else None
        if text is None and rec.get("section") == "queued_message":
            text = data.get("text")
        attrs.append(("ways.data", _text({k: v for k, v in data.items() if k != "extra"})))
        name = {
            "user_prompt": "gen_ai.user.message",
            "queued_message": "gen_ai.user.message",
        }.get(str(rec.get("section")), f"ways.{rec.get('section')}")
        if text is not None:
            attrs.append(("gen_ai.message.content", text))
        attrs += _seal(rec)
        queue.append({"timeUnixNano": str(now), "name": name, "attributes": _attr_pairs(attrs)})

    def _open_call(self, rec: dict[str, Any], data: dict[str, Any], now: int) -> None:
        tid = data.get("tool_use_id")
        if not isinstance(tid, str) or not tid:
            return
        calls = self.state.calls
        if len(calls) >= MAX_OPEN:
            calls.pop(next(iter(calls)))
        calls[tid] = {
            "start": now,
            "ctx": _ctx(rec),
            "kind": data.get("tool_kind"),
            "name": data.get("tool_name"),
            "args": _text(data["input"]) if "input" in data else None,
            "rule_seq": rec.get("rule_seq"),
        }

    def _parent(self, ctx: str) -> str:
        sid, run = self._sid, self.state.run
        if ctx:
            return span_id(sid, "agent", ctx)
        return span_id(sid, "run", run) if run else self._root

    def _trace_of(self, run: str) -> str:
        if self._trace[0] != run:
            self._trace = (run, trace_id(self._sid, run))
        return self._trace[1]

    @staticmethod
    def _key(rec: dict[str, Any]) -> str:
        return str(rec.get("seq") if rec.get("seq") is not None else rec.get("rule_seq"))

    def _span(
        self,
        rec: dict[str, Any],
        sid_key: tuple[str, str],
        name: str,
        start: int,
        end: int,
        attrs: list[tuple[str, Any]],
        parent: str | None,
        kind: int = KIND_INTERNAL,
        error: str | None = None,
        events: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        sid = self._sid
        client = _client(rec.get("traceparent"))  # the client's trace, joined
        span: dict[str, Any] = {
            "traceId": client[0] if client else self._trace_of(self.state.run),
            "spanId": span_id(sid, *sid_key),
        }
        parent = parent or (client[1] if client else None)  # the root: the client's span
        if parent:
            span["parentSpanId"] = parent
        span.update(
            {
                "name": name,
                "kind": kind,
                "startTimeUnixNano": str(min(start or end, end) if end else start),
                "endTimeUnixNano": str(end or start),
                "attributes": _attr_pairs([*attrs, *_seal(rec)]),
            }
        )
        if events:
            span["events"] = events
        if error:
            span["status"] = {"code": STATUS_ERROR, "message": error[:200]}
        return span

    def _common(self, rec: dict[str, Any], operation: str) -> list[tuple[str, Any]]:
        known = _provider(str(rec.get("agent") or DEFAULT))
        provider = known.genai if known else None
        pairs: list[tuple[str, Any]] = [
            ("gen_ai.operation.name", operation),
            ("gen_ai.provider.name", provider),
            ("gen_ai.conversation.id", rec.get("session_id")),
            ("session.id", rec.get("session_id")),  # OpenInference: Phoenix's sessions
            ("langfuse.session.id", rec.get("session_id")),  # Langfuse's (messages.py)
        ]
        who = rec.get("identity")
        user = who.get("user") if isinstance(who, dict) else None
        uid = user.get("id") if isinstance(user, dict) else None
        if isinstance(uid, str) and uid:  # the trace's user, as Langfuse reads it
            pairs += [("user.id", uid), ("langfuse.user.id", uid)]
        if self.legacy:
            pairs.append(("gen_ai.system", provider))
        if rec.get("agent_id"):
            pairs += [("gen_ai.agent.id", rec["agent_id"])]
        return pairs

    def _tool(self, rec: dict[str, Any], data: dict[str, Any], now: int) -> dict[str, Any]:
        raw_id = data.get("tool_use_id")
        tid: str = raw_id if isinstance(raw_id, str) else ""
        call = self.state.calls.pop(tid, None) if tid else None
        tool = data.get("tool_name") if isinstance(data.get("tool_name"), str) else "tool"
        failed = data.get("status") == "failure"
        attrs = [
            *self._common(rec, "execute_tool"),
            ("gen_ai.tool.name", tool),
            ("gen_ai.tool.call.id", tid),
            ("gen_ai.tool.type", "extension" if data.get("mcp_server") else "function"),
            ("ways.tool.kind", data.get("tool_kind")),
        ]
        if data.get("mcp_server"):
            attrs += [
                ("mcp.method.name", "tools/call"),
                ("ways.mcp.server", data.get("mcp_server")),
                ("ways.mcp.tool", data.get("mcp_tool")),
            ]
        if call and call.get("args") is not None:
            attrs.append(("gen_ai.tool.call.arguments", call["args"]))
        if call:
            attrs.append(("ways.call.rule_seq", call.get("rule_seq")))
        result = data.get("error") if failed else data.get("output")
        launched = result.get("agentId") if isinstance(result, dict) else None
        if isinstance(launched, str) and launched and tid:  # an async subagent: its call
            spawned = self.state.spawned  # returned first; the subagent nests under it
            if len(spawned) >= MAX_OPEN:
                spawned.pop(next(iter(spawned)))
            spawned[launched] = tid
        has_result = ("error" if failed else "output") in data
        if has_result:
            attrs.append(("gen_ai.tool.call.result", _text(result)))
        attrs += io.tool(str(tool), call.get("args") if call else None, result, has_result)
        error = None
        if failed:
            error = "tool_error"
            attrs.append(("error.type", error))
        ctx = _ctx(rec)
        start = call["start"] if call and isinstance(call.get("start"), int) else now
        # keyed by the call id when the call was open (a subagent names it as parent); a
        # result without its call (a second result for one id) by its own record
        key = ("tool", tid) if call else ("result", str(rec.get("seq") or rec.get("rule_seq")))
        return self._span(
            rec,
            key,
            f"execute_tool {tool}",
            start,
            now,
            attrs,
            self._parent(ctx),
            error=error,
        )

    def _chat(self, rec: dict[str, Any], data: dict[str, Any], now: int) -> dict[str, Any]:
        ctx = _ctx(rec)
        got_extra = data.get("extra")
        ext: dict[str, Any] = got_extra if isinstance(got_extra, dict) else {}
        model = next((m for m in (data.get("model"), ext.get("model")) if isinstance(m, str)), None)
        attrs = [*self._common(rec, "chat"), ("gen_ai.request.model", model)]
        if model:
            attrs.append(("gen_ai.response.model", model))
        attrs += io.usage(data.get("usage"))  # tokens, and the reply's own cost
        if isinstance(data.get("usage_missing"), str):  # why a span has no tokens
            attrs.append(("ways.usage_missing", data["usage_missing"]))
        reason = "interrupted" if data.get("interrupted") else "stop"
        attrs.append(("gen_ai.response.finish_reasons", [reason]))
        reply = data.get("text") if "text" in data else None
        attrs += io.chat(self.state.prompts.get(ctx), reply, model)
        if not ctx and reply is not None:
            self.state.last = io.clip(reply)  # the run's last output, so far
        events = self.state.events.pop(ctx, None) or None
        start = self.state.turns.get(ctx) or now
        key = self._key(rec)
        name = f"chat {model}" if model else "chat"
        return self._span(
            rec,
            ("chat", key),
            name,
            start,
            now,
            attrs,
            self._parent(ctx),
            kind=KIND_CLIENT,
            events=events,
        )
