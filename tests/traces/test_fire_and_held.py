"""A traces rule says only what happened: `ways sensors fire` sends a complete test
span for every section and reports the consumer's answer (a 415 is refused, exit 7,
never "delivered"); the dispatcher counts a record that only opens a span as held, not
delivered, so `delivered` equals the records in requests a consumer accepted."""

from __future__ import annotations

import json

from ways_sensors.config.sections import SECTIONS
from ways_sensors.errors import NOT_DELIVERED

from ..helpers import counters_of, dispatcher_done, wait_until
from ..servers import Server
from ..sessions import SID, ScriptedSession
from .receive import all_spans, rule


def test_fire_of_every_section_reports_a_refusal_as_refused(install):
    server = Server("otlp-traces", script=[(415, {})] * 1000)  # as Phoenix answers JSON
    try:
        rule(install, server)
        for section in SECTIONS:
            before = len(server.attempts)
            r = install.ways("sensors", "fire", "tr/spans", "--section", section, "--json")
            assert r.returncode == NOT_DELIVERED, (section, r.stdout, r.stderr)
            [res] = json.loads(r.stdout)
            assert res["result"] == "refused" and res["detail"] == "HTTP 415", section
            assert len(server.attempts) == before + 1, section  # a request was made
    finally:
        server.close()


def test_fire_of_a_tool_call_sends_its_span_complete(install):
    server = Server("otlp-traces")
    try:
        rule(install, server)
        r = install.ways("sensors", "fire", "tr/spans", "--section", "tool_call")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "tr/spans: delivered" in r.stdout
        spans = all_spans(server)
        names = sorted(s.name.split(" ")[0] for s in spans)
        assert names == ["execute_tool", "invoke_agent"]
        [tool] = [s for s in spans if s.name.startswith("execute_tool")]
        [root] = [s for s in spans if s.name.startswith("invoke_agent")]
        assert tool.parent_span_id == root.span_id and tool.end_time_unix_nano
    finally:
        server.close()


def test_records_that_only_open_a_span_are_held_not_delivered(install, tmp_path):
    server = Server("otlp-traces")
    try:
        rule(install, server, batch="    batch: {max_records: 1}\n")  # an attempt a record
        ScriptedSession(install, tmp_path / "t").play()
        assert wait_until(lambda: dispatcher_done(install, SID), timeout=120)
        accepted = [a for a in server.attempts if a[1] == 200]
    finally:
        server.close()
    c = counters_of(install, "tr/spans")
    assert c["held"] >= 2  # at least the tool calls, whose results came later
    assert c["delivered"] == len(accepted)  # one record per accepted request
    assert c["delivered"] + c["held"] == c["dispatched"]
    table = install.ways("status").stdout
    assert "HELD" in table.splitlines()[0]
