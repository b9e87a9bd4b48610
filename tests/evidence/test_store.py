"""`verify --key` against a witness's whole store (issue 35 item 3): the checkpoints of
every other session, without the key certificates their own files carried, are absent,
never breaks; a real truncation of the session verified is the first thing said; and a
folder's summary names the session not proven (item 4). Real
dispatchers, the test witness on loopback, the real `ways` command."""

from __future__ import annotations

import json

from .runs import every_batch, root_vkey, session, trusting
from .witness_server import Witness

SESSIONS = 4


def test_one_sessions_file_against_a_witness_whole_store(install, tmp_path):
    out = tmp_path / "audit" / "{session_id}.jsonl"
    install.sensor(
        "audit",
        "enabled: true\nrules:\n  all:\n    chain: true\n    delivery: at_least_once\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    with Witness("witness.test/w1", trusting(install)) as w:
        store: list[str] = []  # every note the witness cosigned, as it keeps them
        real = w.add_checkpoint

        def keep(body: bytes):
            status, answer, ctype = real(body)
            if status == 200:
                store.append(body.decode().partition("\n\n")[2] + answer.decode())
            return status, answer, ctype

        w.add_checkpoint = keep  # type: ignore[method-assign]
        every_batch(install, f"  witness:\n    url: '{w.url}'\n    key: '{w.vkey}'\n")
        sids = [f"store-session-{n}" for n in range(SESSIONS)]
        for sid in sids:
            session(install, sid)
    whole = tmp_path / "witness-store.txt"
    whole.write_text("\n".join(store))
    assert len({n.split("\n")[0] for n in store}) == SESSIONS  # an origin per session
    assert "ways.sensors/" in whole.read_text() and "/keys\n" not in whole.read_text()
    mine = tmp_path / "audit" / f"{sids[1]}.jsonl"
    vkey = root_vkey(install)

    def verify() -> tuple[int, str]:
        more = ("--checkpoints", str(whole), "--witness-key", w.vkey)
        r = install.ways("sensors", "verify", str(mine), "--key", vkey, *more)
        return r.returncode, r.stdout + r.stderr

    rc, text = verify()
    assert rc == 0, text
    assert "signed: 5 records in 1 tree(s)" in text
    assert f"... and {SESSIONS - 1 - 3} more tree(s)" in text or SESSIONS - 1 <= 3
    assert "proven from the root" in text and "no key certified" not in text

    lines = mine.read_text().splitlines(keepends=True)
    last = max(i for i, x in enumerate(lines) if json.loads(x)["section"] != "checkpoint")
    mine.write_text("".join(lines[:last]))  # the last record and what followed it: cut
    rc, text = verify()
    assert rc == 3, text
    said = [x for x in text.splitlines() if "not proven" in x]
    assert said and "the end is not proven" in said[0] and sids[1] in said[0], text
    # the folder of every session's file: a summary names the one not proven
    r = install.ways("sensors", "verify", str(mine.parent), "--key", vkey)
    summary = r.stdout.splitlines()[-1]
    assert r.returncode == 3, r.stdout
    assert summary == f"4 file(s), 4 session(s), 19 record(s); not proven: 1 session(s): {sids[1]}"
    mine.write_text("".join(lines))
    r = install.ways("sensors", "verify", str(mine.parent), "--key", vkey)
    assert r.returncode == 0, r.stdout
    assert (
        r.stdout.splitlines()[-1] == "4 file(s), 4 session(s), 20 record(s); every session proven"
    )
