"""`ways sensors fire` against a real Arize Phoenix: with the encoding Phoenix refuses
(JSON: it answers 415) every section is reported refused with the status and exits 7;
with protobuf a complete test span reaches Phoenix and reads back through its own API."""

from __future__ import annotations

import json
import time

import pytest

from ways_sensors.config.sections import SECTIONS
from ways_sensors.errors import NOT_DELIVERED

from .phoenix import Phoenix, attrs

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    server = Phoenix(tmp_path_factory.mktemp("phoenix-fire") / "phoenix")
    yield server
    server.stop()


def rule(install, url: str, encoding: str) -> None:
    install.sensor(
        "px",
        "rules:\n  spans:\n"
        f"    sections: [{', '.join(SECTIONS)}]\n"
        f"    dispatch: {{otlp: {{endpoint: '{url}', signal: traces, encoding: {encoding}}}}}\n",
    )


def test_fire_with_the_wrong_encoding_is_refused_for_every_section(install, phoenix):
    rule(install, phoenix.url, "json")
    for section in SECTIONS:
        r = install.ways("sensors", "fire", "px/spans", "--section", section, "--json")
        assert r.returncode == NOT_DELIVERED, (section, r.stdout, r.stderr)
        [res] = json.loads(r.stdout)
        assert (res["result"], res["detail"]) == ("refused", "HTTP 415"), section


def test_fire_with_protobuf_puts_a_complete_test_span_in_phoenix(install, phoenix):
    rule(install, phoenix.url, "protobuf")
    r = install.ways("sensors", "fire", "px/spans", "--section", "tool_call", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    [res] = json.loads(r.stdout)
    assert res["result"] == "delivered"
    session = res["session_id"]
    end = time.monotonic() + 60
    mine: list[dict] = []
    while time.monotonic() < end:  # Phoenix inserts what it received in the background
        mine = [s for s in phoenix.spans() if attrs(s).get("session.id") == session]
        if len(mine) >= 2:
            break
        time.sleep(0.5)
    names = sorted(s["name"].split(" ")[0] for s in mine)
    assert names == ["execute_tool", "invoke_agent"], mine
    [tool] = [s for s in mine if s["name"].startswith("execute_tool")]
    [root] = [s for s in mine if s["name"].startswith("invoke_agent")]
    assert tool["parent_span_id"] == root["span_id"]
    assert int(tool["end_time_unix_nano"]) <= int(root["end_time_unix_nano"])
