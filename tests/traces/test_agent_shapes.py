"""Codex and Gemini CLI sessions (recorded from the real clients: four processes of one
session each, tool calls, a failing command) through the real hook and dispatcher become
the same span shapes as a Claude Code session, under their own agent name: one root
`invoke_agent {agent}`, one `invoke_agent` run per resumed process, a `chat` span per
reply, `execute_tool {tool}` per call; the same GenAI attributes on each kind of span as
far as the records carry them. Their replies carry their model and tokens (Codex's
from its rollout, Gemini CLI's from its chat file), so their chat spans have usage, and
a Gemini CLI reply (its model is in the price table) its cost."""

from __future__ import annotations

import pytest

from ways_sensors.agents.providers import PROVIDERS
from ways_sensors.traces import ids

from ..agents.fixtures import CODEX, GEMINI, dispatch, load, replay
from ..conftest import ALL_SECTIONS, Install, kill_dispatchers
from ..helpers import wait_until
from ..servers import Server
from ..sessions import SID, ScriptedSession

CORE = {  # what every span of a kind carries, whatever the agent
    "invoke_agent": {"gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.conversation.id",
                     "gen_ai.provider.name"},
    "chat": {"gen_ai.operation.name", "gen_ai.response.finish_reasons",
             "gen_ai.conversation.id", "gen_ai.provider.name", "gen_ai.output.messages"},
    "execute_tool": {"gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.call.id",
                     "gen_ai.tool.type", "gen_ai.conversation.id", "gen_ai.provider.name"},
}  # fmt: skip
SEAL = {"ways.rule_seq", "ways.chain.hash"}
USAGE = {
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_creation.input_tokens",
}
MODEL = {"gen_ai.request.model", "gen_ai.response.model"}


def sensor(port: int) -> str:
    return (
        "rules:\n  spans:\n"
        f"    sections: [{', '.join(ALL_SECTIONS)}]\n"
        "    delivery: at_least_once\n    chain: true\n"
        f"    dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{port}', signal: traces}}}}\n"
    )


def keys(span) -> set[str]:
    return {kv.key for kv in span.attributes}


def value(span, key: str):
    kv = next(kv for kv in span.attributes if kv.key == key)
    return getattr(kv.value, kv.value.WhichOneof("value"))


def traced(tmp_path, agent: str) -> tuple[str, list, int]:
    """(session id, spans, resumed processes) of the agent's recorded session."""
    server = Server("otlp-traces")
    install = Install(tmp_path / agent)
    try:
        install.sensor("tr", sensor(server.port))
        if agent == "claude-code":
            ScriptedSession(install, tmp_path / "t").play()
            sid, resumed = SID, 0
        else:
            fx = load(CODEX if agent == "codex" else GEMINI)
            replay(install, fx, agent)
            dispatch(install, fx.session_id)
            sid = fx.session_id
            resumed = sum(p.get("source") == "resume" for p in fx.payloads("SessionStart"))
        ends = 1 + resumed

        def spans():
            return [s for r in server.requests for rs in r.resource_spans
                    for ss in rs.scope_spans for s in ss.spans]  # fmt: skip

        assert wait_until(lambda: sum(s.name == f"invoke_agent {agent}" for s in spans()) == ends)
        assert server.errors == []
        return sid, spans(), resumed
    finally:
        server.close()
        kill_dispatchers(install.root)


@pytest.fixture(scope="module")
def claude_shape(tmp_path_factory):
    _, spans, _ = traced(tmp_path_factory.mktemp("claude"), "claude-code")
    return shape(spans)


def shape(spans) -> dict[str, set[str]]:
    """The GenAI attribute keys the spans of a kind carry (kind: the name's first word),
    but a subagent's (`gen_ai.agent.id`: these Codex and Gemini sessions have none)."""
    out: dict[str, set[str]] = {}
    for s in spans:
        got = {k for k in keys(s) if k.startswith("gen_ai.") and k != "gen_ai.agent.id"}
        out.setdefault(s.name.split(" ")[0], set()).update(got)
    return out


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_an_agents_session_makes_the_same_span_shapes_under_its_own_name(
    tmp_path, agent, claude_shape
):
    sid, spans, resumed = traced(tmp_path, agent)
    assert resumed >= 1  # the recorded session is several processes
    traces = {s.trace_id for s in spans}  # a trace per run, grouped by the session id
    assert ids.trace_id(sid) in {t.hex() for t in traces} and len(traces) == resumed + 1
    assert {value(s, "session.id") for s in spans} == {sid}
    assert len({s.span_id for s in spans}) == len(spans)
    roots = [s for s in spans if not s.parent_span_id]
    assert {r.trace_id for r in roots} == traces and len(roots) == len(traces)
    [root] = [r for r in roots if r.trace_id.hex() == ids.trace_id(sid)]
    assert root.name == f"invoke_agent {agent}"
    assert value(root, "gen_ai.agent.name") == agent
    assert value(root, "gen_ai.provider.name") == PROVIDERS[agent].genai
    runs = [r for r in roots if r is not root]
    assert len(runs) == resumed and {r.name for r in runs} == {root.name}
    tops = {r.span_id for r in roots}
    by_id = {s.span_id: s for s in spans}
    for s in spans:  # each under a parent of its own trace that ends no sooner
        if s.parent_span_id:
            up = by_id[s.parent_span_id]
            assert up.trace_id == s.trace_id and s.end_time_unix_nano <= up.end_time_unix_nano

    by_kind: dict[str, list] = {}
    for s in spans:
        by_kind.setdefault(s.name.split(" ")[0], []).append(s)
    assert set(by_kind) == {"invoke_agent", "chat", "execute_tool"}
    for kind, members in by_kind.items():
        for s in members:
            assert CORE[kind] | SEAL <= keys(s), (kind, CORE[kind] - keys(s))
            assert value(s, "gen_ai.operation.name") == kind
    for s in by_kind["chat"] + by_kind["execute_tool"]:
        assert s.parent_span_id in tops  # each under the root or its process's run
    for s in by_kind["chat"]:
        model = value(s, "gen_ai.request.model") if keys(s) >= MODEL else None
        assert s.name == (f"chat {model}" if model else "chat")
        # Codex: the Stop names the model, the rollout counts the tokens; Gemini CLI: the
        # chat file has both, and its model is in the price table
        assert keys(s) >= USAGE and value(s, "gen_ai.usage.input_tokens") > 0
        if agent == "gemini":
            assert value(s, "ways.cost.amount") > 0 and value(s, "ways.cost.currency") == "USD"
    model = {"codex": "mock-model", "gemini": "gemini-3.8-flash"}[agent]
    assert {s.name for s in by_kind["chat"]} == {f"chat {model}"}
    for s in by_kind["execute_tool"]:
        assert s.name == f"execute_tool {value(s, 'gen_ai.tool.name')}"
    failed = [s for s in by_kind["execute_tool"] if s.status.code == 2]
    assert len(failed) == 1 and value(failed[0], "error.type") == "tool_error"

    # the same GenAI attributes on each kind of span as a Claude Code session's
    mine = shape(spans)
    for kind in ("invoke_agent", "execute_tool"):
        assert mine[kind] == claude_shape[kind], (kind, mine[kind] ^ claude_shape[kind])
    differ = claude_shape["chat"] ^ mine["chat"]  # only what a record may lack: model, usage
    assert differ <= USAGE | MODEL, differ
