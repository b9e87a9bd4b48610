"""A reply's cost: priced by the real dispatcher from the transcript's model and tokens,
checked against the price table's own answer; an unknown model says why; the session
end carries the total, subagents' replies included."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import genai_prices
import pytest

from ways_sensors.dispatch import pricing

from .conftest import REPO, kill_dispatchers
from .helpers import dispatcher_alive, lines, wait_until
from .sessions import ScriptedSession

KNOWN_MODEL = "claude-sonnet-4-5-20250929"
UNKNOWN_MODEL = "mystery-model-9"
USAGE_1 = {"input_tokens": 1200, "output_tokens": 340, "cache_read_input_tokens": 20000,
           "cache_creation_input_tokens": 500}  # fmt: skip
USAGE_2 = {"input_tokens": 10, "output_tokens": 5}
SUB_USAGE = {"input_tokens": 800, "output_tokens": 90, "cache_read_input_tokens": 3000}
AGENT = "a1b2c3d4e5f6a7b8c"


def table_price(model: str, u: dict, calls: int = 1) -> Decimal:
    """What genai-prices itself says one call (or `calls` equal calls) costs."""
    cr, cw = u.get("cache_read_input_tokens", 0), u.get("cache_creation_input_tokens", 0)
    usage = genai_prices.Usage(
        input_tokens=u["input_tokens"] + cr + cw,
        output_tokens=u["output_tokens"],
        cache_read_tokens=cr,
        cache_write_tokens=cw,
    )
    return Decimal(genai_prices.calc_price(usage, model, provider_id="anthropic").total_price)


def ask(session: ScriptedSession, text: str) -> None:
    session.line(
        {"type": "user", "message": {"role": "user", "content": text}, "origin": {"kind": "human"}}
    )
    session.hook("UserPromptSubmit", prompt=text)


def reply(session: ScriptedSession, text: str, mid: str, model: str, usage: dict, **kw) -> None:
    msg = {"id": mid, "role": "assistant", "model": model, "stop_reason": "end_turn",
           "content": [{"type": "text", "text": text}], "usage": usage}  # fmt: skip
    session.line({"type": "assistant", "message": msg, **kw})


def replies_in(path: Path) -> int:
    return sum(r["section"] == "assistant_response" for r in lines(path))


@pytest.fixture
def costs(install, tmp_path):
    out = tmp_path / "costs.jsonl"
    install.sensor(
        "c",
        f"""
        rules:
          costs:
            sections: [assistant_response, session_end, subagent]
            delivery: at_least_once
            dispatch: {{file: {{path: '{out}'}}}}
        """,
    )
    return out


def test_each_reply_carries_its_cost_and_the_session_end_the_total(install, tmp_path, costs):
    s = ScriptedSession(install, tmp_path / "t")
    s.hook("SessionStart", source="startup")
    ask(s, "price me")
    reply(s, "first answer", "msg_1", KNOWN_MODEL, USAGE_1)
    s.hook("Stop", last_assistant_message="first answer", stop_hook_active=False)
    assert wait_until(lambda: replies_in(costs) == 1)  # as a live session: built in time
    ask(s, "again")
    reply(s, "second answer", "msg_2", UNKNOWN_MODEL, USAGE_2)
    s.hook("Stop", last_assistant_message="second answer", stop_hook_active=False)
    s.hook("SessionEnd", reason="other")
    assert wait_until(lambda: any(r["section"] == "session_end" for r in lines(costs)))

    recs = lines(costs)
    replies = [r for r in recs if r["section"] == "assistant_response"]
    assert [r["data"]["text"] for r in replies] == ["first answer", "second answer"]

    first = replies[0]["data"]["usage"]
    expected = table_price(KNOWN_MODEL, USAGE_1)
    assert first["cost"] == {
        "currency": "USD",
        "amount": float(round(expected, 12)),
        "model": "claude-sonnet-4-5",
        "source": "genai-prices",
        "version": genai_prices.__version__,
    }
    assert expected > 0
    assert "cost_missing" not in first

    second = replies[1]["data"]["usage"]
    assert "cost" not in second  # never a guess
    assert UNKNOWN_MODEL in second["cost_missing"] and "genai-prices" in second["cost_missing"]

    end = next(r for r in recs if r["section"] == "session_end")["data"]["cost"]
    assert end["amount"] == float(round(expected, 12))
    assert (end["replies"], end["unpriced"], end["currency"]) == (1, 1, "USD")


def test_the_total_survives_a_dispatcher_restart_and_counts_subagent_replies(
    install, tmp_path, costs
):
    s = ScriptedSession(install, tmp_path / "t")
    s.hook("SessionStart", source="startup")
    ask(s, "go")
    reply(s, "main answer", "msg_1", KNOWN_MODEL, USAGE_1)
    s.hook("Stop", last_assistant_message="main answer", stop_hook_active=False)
    assert wait_until(lambda: any(r["section"] == "assistant_response" for r in lines(costs)))
    kill_dispatchers(install.root)  # SIGKILL: the total must come back from the cursor
    assert wait_until(lambda: not dispatcher_alive(install, s.sid))

    # a subagent's reply, in its own file as Claude Code writes it
    sub = s.transcript.parent / s.sid / "subagents" / f"agent-{AGENT}.jsonl"
    sub.parent.mkdir(parents=True)
    msg = {"id": "msg_sub", "role": "assistant", "model": KNOWN_MODEL, "stop_reason": "end_turn",
           "content": [{"type": "text", "text": "sub answer"}], "usage": SUB_USAGE}  # fmt: skip
    line = {"type": "assistant", "isSidechain": True, "agentId": AGENT, "sessionId": s.sid,
            "timestamp": "2026-10-06T09:14:30.000Z", "message": msg}  # fmt: skip
    sub.write_text(json.dumps(line) + "\n")
    s.hook("SubagentStart", agent_id=AGENT, agent_type="Explore")
    s.hook(
        "SubagentStop",
        agent_id=AGENT,
        agent_type="Explore",
        agent_transcript_path=str(sub),
        last_assistant_message="sub answer",
    )
    s.hook("SessionEnd", reason="other")
    assert wait_until(lambda: any(r["section"] == "session_end" for r in lines(costs)))

    recs = lines(costs)
    sub_reply = next(
        r for r in recs if r["section"] == "assistant_response" and r["agent_id"] == AGENT
    )
    sub_cost = sub_reply["data"]["usage"]["cost"]["amount"]
    assert sub_cost == float(round(table_price(KNOWN_MODEL, SUB_USAGE), 12))
    end = next(r for r in recs if r["section"] == "session_end")["data"]["cost"]
    total = table_price(KNOWN_MODEL, USAGE_1) + table_price(KNOWN_MODEL, SUB_USAGE)
    assert end["amount"] == pytest.approx(float(total), abs=1e-9)
    assert end["replies"] == 2


def subagent_reply(s: ScriptedSession, usage: dict) -> None:
    """A subagent's reply, in its own file as Claude Code writes it, and its hooks."""
    sub = s.transcript.parent / s.sid / "subagents" / f"agent-{AGENT}.jsonl"
    sub.parent.mkdir(parents=True, exist_ok=True)
    msg = {"id": "msg_sub", "role": "assistant", "model": KNOWN_MODEL, "stop_reason": "end_turn",
           "content": [{"type": "text", "text": "sub answer"}], "usage": usage}  # fmt: skip
    line = {"type": "assistant", "isSidechain": True, "agentId": AGENT, "sessionId": s.sid,
            "timestamp": "2026-10-06T09:14:30.000Z", "message": msg}  # fmt: skip
    sub.write_text(json.dumps(line) + "\n")
    s.hook("SubagentStart", agent_id=AGENT, agent_type="Explore")
    s.hook("SubagentStop", agent_id=AGENT, agent_type="Explore",
           agent_transcript_path=str(sub), last_assistant_message="sub answer")  # fmt: skip


def test_a_resumed_session_s_end_totals_every_run_subagents_included(install, tmp_path, costs):
    """Two client processes of one session (`claude -p`, then `claude -p --resume`): the
    first run's dispatcher ends, leaves its ledger and removes the session folder; the
    second run's session_end totals both runs' replies, its subagent's included."""
    s = ScriptedSession(install, tmp_path / "t")
    s.hook("SessionStart", source="startup")
    ask(s, "first run")
    reply(s, "run one", "msg_1", KNOWN_MODEL, USAGE_1)
    s.hook("Stop", last_assistant_message="run one", stop_hook_active=False)
    s.hook("SessionEnd", reason="other")
    layout = install.layout
    assert wait_until(lambda: not Path(layout.session_dir(s.sid)).exists())  # left, ledger kept
    ends = [r for r in lines(costs) if r["section"] == "session_end"]
    assert len(ends) == 1 and ends[0]["data"]["cost"]["replies"] == 1

    s.hook("SessionStart", source="resume")
    ask(s, "second run")
    reply(s, "run two", "msg_2", KNOWN_MODEL, USAGE_2)
    s.hook("Stop", last_assistant_message="run two", stop_hook_active=False)
    subagent_reply(s, SUB_USAGE)
    s.hook("SessionEnd", reason="other")
    assert wait_until(lambda: sum(r["section"] == "session_end" for r in lines(costs)) == 2)

    recs = lines(costs)
    priced = [r["data"]["usage"]["cost"]["amount"] for r in recs
              if r["section"] == "assistant_response"]  # fmt: skip
    assert len(priced) == 3
    total = sum(table_price(KNOWN_MODEL, u) for u in (USAGE_1, USAGE_2, SUB_USAGE))
    first, second = (r["data"]["cost"] for r in recs if r["section"] == "session_end")
    assert first["amount"] == float(round(table_price(KNOWN_MODEL, USAGE_1), 12))
    assert second["amount"] == pytest.approx(float(total), abs=1e-9)
    assert second["amount"] == pytest.approx(sum(priced), abs=1e-9)
    assert (second["replies"], second["unpriced"]) == (3, 0)


def test_a_reply_of_several_calls_is_priced_as_that_many_calls():
    # one call of 300k input tokens is in Sonnet's upper tier; three calls of 100k are not
    usage = {"input_tokens": 300_000, "output_tokens": 3_000, "api_calls": 3}
    got = pricing.price(KNOWN_MODEL, usage, "claude-code", "2026-10-06T09:14:00.000Z")
    assert isinstance(got, dict)
    one = table_price(KNOWN_MODEL, {"input_tokens": 100_000, "output_tokens": 1_000})
    assert got["amount"] == float(round(one * 3, 12))
    whole = table_price(KNOWN_MODEL, {"input_tokens": 300_000, "output_tokens": 3_000})
    assert whole > one * 3  # the tier the sum alone would have crossed


def test_what_cannot_be_priced_says_why():
    when = "2026-10-06T09:14:00.000Z"
    assert pricing.price(None, {"input_tokens": 1}, "claude-code", when) == "no model named"
    assert "too long" in str(pricing.price("m" * 5000, {"input_tokens": 1}, None, when))
    assert "no price for model" in str(pricing.price("nope-1", {"input_tokens": 1}, None, when))


VERSION_CHECK = """
import sys
from ways_sensors.dispatch import pricing
got = pricing.version()
imported = "genai_prices" in sys.modules
try:
    import genai_prices
    table = genai_prices.__version__
except ImportError:
    table = "absent"
print(got, imported, table)
"""


def _version_in(extra_path: Path | None) -> list[str]:
    env = dict(os.environ)
    if extra_path is not None:  # looked in before site-packages
        env["PYTHONPATH"] = os.pathsep.join([str(extra_path), str(REPO)])
    out = subprocess.run(
        [sys.executable, "-c", VERSION_CHECK], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def test_the_version_a_session_end_names_is_read_without_importing_the_table():
    got, imported, table = _version_in(None)
    assert got == table == genai_prices.__version__
    assert imported == "False"  # the package and its table stay unloaded


def test_a_package_without_metadata_beside_it_is_asked_its_version(tmp_path):
    # a copy with no dist-info beside it (a source tree on PYTHONPATH): imported instead
    shutil.copytree(Path(genai_prices.__file__).parent, tmp_path / "genai_prices")
    got, imported, _ = _version_in(tmp_path)
    assert (got, imported) == (genai_prices.__version__, "True")
    # one that cannot be imported: absent, as a missing package is
    (tmp_path / "genai_prices" / "__init__.py").write_text("raise ImportError('broken')\n")
    assert _version_in(tmp_path) == ["absent", "False", "absent"]
