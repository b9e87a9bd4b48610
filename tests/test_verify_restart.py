"""`verify` on a file holding a session resumed after its ledger entry was pruned: the
real hook and dispatcher number the resumed session's records from rule_seq 1 again in
the same file; that is a restart, reported, never a tamper alarm."""

from __future__ import annotations

import json

from .helpers import dispatcher_done, lines, no_checkpoints, records, wait_until
from .sessions import EXPECTED, SID, TOTAL, ScriptedSession


def test_a_session_resumed_after_its_ledger_entry_went_is_a_restart_not_an_insert(
    install, tmp_path
):
    out = tmp_path / "audit.jsonl"
    install.sensor(
        "chained",
        f"""\
        rules:
          all:
            sections: [{", ".join(EXPECTED)}]
            delivery: at_least_once
            chain: true
            dispatch: {{file: {{path: '{out}'}}}}
        """,
    )
    ScriptedSession(install, tmp_path / "first").play()
    assert wait_until(lambda: dispatcher_done(install, SID))
    ledger = install.state_root / "ledger" / f"{SID}.json"
    assert ledger.exists() and not (install.state_root / "sessions" / SID).exists()
    ledger.unlink()  # what retention's prune does past LEDGER_MAX sessions

    ScriptedSession(install, tmp_path / "again").play()  # the same session, resumed
    assert wait_until(lambda: dispatcher_done(install, SID))
    seqs = [r["rule_seq"] for r in records(out)]
    assert seqs == list(range(1, TOTAL + 1)) * 2  # numbered anew in the same file

    r = install.ways("sensors", "verify", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "restart" in r.stdout
    got = json.loads(install.ways("sensors", "verify", str(out), "--json").stdout)
    [c] = got["chains"]
    again = [n for n, x in enumerate(lines(out), 1) if x.get("rule_seq") == 1][1]  # its line
    assert got["ok"] and c["restarts"] == [again] and c["last"] == TOTAL
    r = install.ways("sensors", "verify", str(out), "--rule", "chained/all")
    assert r.returncode == 0, r.stdout + r.stderr
    # signed too: each run is a tree of its own under the session's origin (it was
    # reported as `differs` and `fork`)
    key = json.loads(install.ways("keys", "show", "--json").stdout)["verifier_key"]
    r = install.ways("sensors", "verify", str(out), "--key", key, "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    trees = json.loads(r.stdout)["evidence"]["trees"]
    # each run's records and the end leaf its dispatcher closed it with (evidence/carry.py)
    assert [(t["run"], t["signed_size"]) for t in trees] == [(0, TOTAL + 1), (1, TOTAL + 1)]

    # tampering after the restart is still found
    text = out.read_text().splitlines(keepends=True)
    at = [i for i, line in enumerate(text) if no_checkpoints([line])]  # records' lines
    del text[at[TOTAL + 3]]
    out.write_text("".join(text))
    r = install.ways("sensors", "verify", str(out))
    assert r.returncode == 3 and "deleted" in r.stdout, r.stdout
