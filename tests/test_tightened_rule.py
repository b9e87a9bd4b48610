"""A rule tightened while its batch waits (issue 22, defect 10), through the real hook, the
detached dispatcher and a real command consumer.

The batch a rule has taken but not yet delivered was finished (projected, masked,
chained) when it was taken; the rule is then changed from `redact: none` to
`fields: metadata`. What the consumer receives must be what the new rule allows, never
the batch as the older, looser rule finished it (refinish.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from ways_sensors.pipeline.chain import GENESIS, link

from .helpers import SID, cursor_of, dispatcher_lock, lines, records, start_dispatcher, wait_until

CANARY = "CANARY-7c1f"
SECRET = "ghp_" + "Zq8Lk2Rt5Vx9Pw3Nm6Hj1Gf4Ds7Ba0Ce" + "Yu2T"


def logged(install, kind: str) -> list[dict]:
    return [e for e in lines(install.state_root / "events.log") if e["kind"] == kind]


def sensor(argv: str, **fields: str) -> str:
    extra = "".join(f"    {k}: {v}\n" for k, v in fields.items())
    return (
        "rules:\n  r:\n    sections: [tool_call]\n    delivery: at_least_once\n"
        "    chain: true\n    batch: {max_records: 50, max_delay: 0}\n"
        + extra
        + f"    dispatch: {{command: {{argv: {argv}}}}}\n"
    )


def test_a_batch_pending_when_the_rule_is_tightened_goes_out_as_the_new_rule_allows(
    install, tmp_path: Path
):
    out = tmp_path / "out.jsonl"
    install.sensor("t", sensor("[sh, -c, 'exit 1']", redact="none"))  # the consumer is down
    with dispatcher_lock(install, SID):  # the five records reach the journal together
        for n in range(5):
            p = {
                "session_id": SID,
                "hook_event_name": "PreToolUse",
                "cwd": str(install.project),
                "tool_name": "Bash",
                "tool_use_id": f"toolu_{n}",
                "tool_input": {"command": f"echo {CANARY}-{n} {SECRET}"},
            }
            r = install.hook(p)
            assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    proc = start_dispatcher(install)
    try:
        # the batch is taken, finished under `redact: none`, pending, and refused
        assert wait_until(
            lambda: any(e.get("records") == 5 for e in logged(install, "dispatch.refused"))
        )
        cursor = cursor_of(install, "t.r")  # pending, unmasked, as the old rule finished it
        assert cursor and SECRET in json.dumps(cursor["pending"])

        # tightened, and the consumer is back (a new command: only the new rule's worker writes)
        install.sensor("t", sensor(f"[sh, -c, 'cat >> {out}']", fields="metadata"))
        assert wait_until(lambda: len(records(out)) == 5, timeout=60), logged(
            install, "dispatch.refused"
        )

        text = out.read_text()
        assert CANARY not in text and SECRET not in text
        got = records(out)
        assert [r["rule_seq"] for r in got] == [1, 2, 3, 4, 5]
        assert [r["data"]["tool_use_id"] for r in got] == [f"toolu_{n}" for n in range(5)]
        for r in got:
            assert set(r["data"]["input"]) == {"hmac", "size"}, r["data"]  # the metadata digest
            assert "redactions" not in r
        prev = GENESIS  # chained again over what is sent, from the batch's first link
        for r in got:
            body = {k: v for k, v in r.items() if k != "chain"}
            assert r["chain"]["prev"] == prev and r["chain"]["hash"] == link(prev, body)
            prev = r["chain"]["hash"]
        [done] = logged(install, "dispatch.pending_refinished")
        assert (done["records"], done["withheld"], done["lost"]) == (5, 0, 0)
        assert CANARY not in json.dumps(done)
        r = install.ways("sensors", "verify", str(out))
        assert r.returncode == 0, r.stdout + r.stderr
        # sealed anew: the batch's checkpoint signs what was sent, not the old leaves
        [cp] = [x for x in lines(out) if x["section"] == "checkpoint"]
        assert lines(out)[-1] == cp and cp["consistency"]["from"] == 0
        key = json.loads(install.ways("keys", "show", "--json").stdout)["verifier_key"]
        r = install.ways("sensors", "verify", str(out), "--key", key)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        proc.kill()
        proc.wait()
