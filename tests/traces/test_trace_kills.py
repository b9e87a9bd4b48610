"""SIGKILLs of the dispatcher during a traced session: the real detached dispatcher is
killed again and again while a session's turns (prompts, tool calls, a failing one,
replies) keep arriving, then a last one drains it. At the loopback traces receiver
(decoding with the official protobuf definitions): a span sent twice (at_least_once
resends the batch a kill cut short) is the same span, byte for byte; and no span is
lost: one per tool call, one per reply, the root, as the session's records say."""

from __future__ import annotations

import os
import random
import signal
import time

import pytest

from ways_sensors.traces import ids

from ..conftest import ALL_SECTIONS, payload
from ..helpers import SID, lines, spool_directly, start_dispatcher, wait_until
from ..servers import Server

pytestmark = pytest.mark.slow
TURNS = 60
CALLS = 5  # per turn


def turns() -> list[tuple[str, dict]]:
    """The session after its start: TURNS turns of CALLS tool calls each (the third
    call of every turn fails), each ending in a reply."""
    out: list[tuple[str, dict]] = []
    for t in range(TURNS):
        out.append(("UserPromptSubmit", {**payload("UserPromptSubmit"), "prompt": f"turn {t}"}))
        ids_ = [f"toolu_{t:03d}_{c}" for c in range(CALLS)]
        for tid in ids_:
            out.append(("PreToolUse", {**payload("PreToolUse"), "tool_use_id": tid}))
        for c, tid in enumerate(ids_):
            event = "PostToolUseFailure" if c == 2 else "PostToolUse"
            out.append((event, {**payload(event), "tool_use_id": tid}))
        out.append(("Stop", {**payload("Stop"), "last_assistant_message": f"reply {t}"}))
    return out


def test_kills_leave_no_span_twice_with_other_content_and_none_lost(install, tmp_path):
    receiver = Server("otlp-traces")
    out = tmp_path / "records.jsonl"
    sections = ", ".join(ALL_SECTIONS)
    install.sensor(
        "killed",
        "rules:\n"
        "  spans:\n"
        f"    sections: [{sections}]\n"
        "    delivery: at_least_once\n    chain: true\n"
        "    batch: {max_records: 7}\n"
        f"    dispatch: {{otlp: {{endpoint: 'http://127.0.0.1:{receiver.port}', "
        "signal: traces}}\n"
        "  records:\n"
        f"    sections: [{sections}]\n"
        "    delivery: at_least_once\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    try:
        rest = turns()
        spool_directly(install, [("SessionStart", payload("SessionStart")), *rest[:60]])
        rest = rest[60:]
        rnd = random.Random(20261202)
        kills = 0
        proc = start_dispatcher(install)
        while rest:  # turns keep coming while the dispatcher is killed and restarted
            sent = len(receiver.requests)
            wait_until(lambda n=sent, p=proc: len(receiver.requests) > n or p.poll() is not None,
                       timeout=10, step=0.01)  # fmt: skip
            time.sleep(rnd.uniform(0, 0.05))
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                kills += 1
            proc.wait()
            spool_directly(install, rest[:40])
            rest = rest[40:]
            proc = start_dispatcher(install)
        spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
        proc.wait(timeout=300)
        root = ids.span_id(SID, "root")
        assert wait_until(lambda: any(s.span_id.hex() == root for s in spans(receiver)))
        assert kills >= 5, "the session was drained before it could be killed enough"
        assert receiver.errors == []

        got = spans(receiver)
        copies: dict[str, bytes] = {}
        for s in got:  # a span sent again is the same span, byte for byte
            body = s.SerializeToString(deterministic=True)
            assert copies.setdefault(s.span_id.hex(), body) == body, s.name
        records = lines(out)
        want = {root}
        want |= {ids.span_id(SID, "tool", r["data"]["tool_use_id"])
                 for r in records if r["section"] == "tool_call"}  # fmt: skip
        want |= {ids.span_id(SID, "chat", str(r["seq"]))
                 for r in records if r["section"] == "assistant_response"}  # fmt: skip
        assert len(want) == 1 + TURNS * CALLS + TURNS
        assert set(copies) == want  # none lost, none made up
        failed = [s for s in got if s.status.code == 2]
        assert {s.span_id.hex() for s in failed} == {
            ids.span_id(SID, "tool", f"toolu_{t:03d}_2") for t in range(TURNS)
        }
    finally:
        receiver.close()


def spans(receiver: Server) -> list:
    return [s for r in receiver.requests for rs in r.resource_spans for ss in rs.scope_spans
            for s in ss.spans]  # fmt: skip
