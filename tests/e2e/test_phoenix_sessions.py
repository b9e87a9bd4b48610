"""A real Claude Code session (the harness's six `claude -p` runs of one session, no
client trace joined) into a real Arize Phoenix, read back through Phoenix's own APIs
(REST for spans, GraphQL for sessions, as its UI reads them): a chat span's input (its
turn's prompt) and output (the reply), the session's first input and last output (one
trace per run, grouped by `session.id`), span costs summing to the session's cost, and
no span ending after its parent."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from ways_sensors.traces import ids

from . import harness
from .phoenix import Phoenix, attrs

pytestmark = pytest.mark.slow
SESSIONS = """query { projects { edges { node { name sessions(first: 50) { edges { node {
  sessionId numTraces firstInput { value } lastOutput { value } } } } } } } }"""


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    root = tmp_path_factory.mktemp("phoenix-sessions")
    server = Phoenix(root / "phoenix")
    try:
        s = harness.prepare(root / "client")
        server.sensor(s.root, harness.SECTIONS)
        harness.run(s, env_extra={"TRACEPARENT": None})
        records = s.records()
        want = sum(r["section"] == "assistant_response" for r in records)
        end = time.monotonic() + 120
        spans: list[dict] = []
        while time.monotonic() < end:  # Phoenix inserts what it received in the background
            spans = [x for x in server.spans() if attrs(x).get("session.id") == s.session_id]
            roots = [x for x in spans if not x.get("parent_span_id")]
            chats = [x for x in spans if x["name"].startswith("chat")]
            if len(chats) >= want and len(roots) >= len(harness.PROMPTS):
                break
            time.sleep(1)
        yield s, records, spans, server
    finally:
        server.stop()


def main_replies(records: list[dict]) -> list[dict]:
    return [r for r in records if r["section"] == "assistant_response" and not r.get("agent_id")]


def prompts(records: list[dict]) -> list[dict]:
    return [r for r in records if r["section"] == "user_prompt" and not r.get("agent_id")]


def test_a_chat_spans_input_and_output_read_back(traced):
    s, records, spans, _ = traced
    reply = main_replies(records)[0]
    [chat] = [
        x for x in spans if x["span_id"] == ids.span_id(s.session_id, "chat", str(reply["seq"]))
    ]
    a = attrs(chat)
    assert a["openinference.span.kind"] == "LLM"
    assert a["input.value"] == prompts(records)[0]["data"]["prompt"]
    assert a["output.value"] == reply["data"]["text"]
    assert json.loads(a["gen_ai.input.messages"])[0]["parts"][0]["content"] == a["input.value"]


def test_the_sessions_first_input_and_last_output_read_back(traced):
    s, records, _, server = traced
    req = urllib.request.Request(
        server.url + "/graphql",
        data=json.dumps({"query": SESSIONS}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        got = json.loads(r.read())
    assert "errors" not in got, got
    nodes = [
        e["node"] for p in got["data"]["projects"]["edges"] for e in p["node"]["sessions"]["edges"]
    ]
    [session] = [n for n in nodes if n["sessionId"] == s.session_id]
    assert session["numTraces"] == len(harness.PROMPTS)  # a trace per run
    first = prompts(records)[0]["data"]["prompt"]
    last = main_replies(records)[-1]["data"]["text"]
    assert session["firstInput"]["value"] == first
    assert session["lastOutput"]["value"] == last


def test_span_costs_sum_to_the_sessions_cost(traced):
    _, records, spans, _ = traced
    ends = [r for r in records if r["section"] == "session_end"]
    session_cost = ends[-1]["data"]["cost"]["amount"]
    total = sum(attrs(x).get("ways.cost.amount") or 0.0 for x in spans)
    assert session_cost > 0 and total == pytest.approx(session_cost)


def test_no_span_ends_after_its_parent(traced):
    _, _, spans, _ = traced
    by_id = {x["span_id"]: x for x in spans}
    checked = 0
    for x in spans:
        up = by_id.get(x.get("parent_span_id") or "")
        if up is not None:
            assert x["trace_id"] == up["trace_id"]
            assert int(x["end_time_unix_nano"]) <= int(up["end_time_unix_nano"]), x["name"]
            checked += 1
    assert checked >= len(spans) - len(harness.PROMPTS)  # all but the roots
