"""evidence/witness.py: the tlog-witness client against the spec-written loopback witness."""

from __future__ import annotations

import os

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ways_sensors.evidence import merkle, note, witness

from ..servers import Server
from . import independent as ind
from .witness_server import Witness

ORIGIN = "ways.sensors/test/s/r/session-1"


def _log():
    key = note.Signer(Ed25519PrivateKey.generate())
    return key, (lambda origin: [(origin, key.public)] if origin.startswith("ways.") else None)


def _signed(key, tree, size):
    cp = note.checkpoint(ORIGIN, size, tree.root(size))
    return note.Note(cp.text, [key.sign(cp.text, ORIGIN)])


def test_cosigns_a_first_checkpoint_then_a_consistent_one():
    key, trust = _log()
    tree = merkle.Tree(os.urandom(32) for _ in range(11))
    with Witness("witness.test/w1", trust) as w:
        client = witness.Witness(w.url, note.parse_vkey(w.vkey))
        first = _signed(key, tree, 4)
        a = witness.add_checkpoint(client, 0, [], first)
        assert a.status == "cosigned", a.detail
        first.signatures.extend(a.cosignatures)
        assert ind.cosigned_by(str(first), w.name, w.public)
        second = _signed(key, tree, 11)
        b = witness.add_checkpoint(client, 4, tree.consistency_proof(4, 11), second)
        assert b.status == "cosigned", b.detail
        assert w.state[ORIGIN][0] == 11


def test_a_fork_gets_409_with_the_witness_size_and_a_bad_proof_is_refused():
    key, trust = _log()
    tree = merkle.Tree(os.urandom(32) for _ in range(8))
    fork = merkle.Tree(os.urandom(32) for _ in range(9))
    with Witness("witness.test/w1", trust) as w:
        client = witness.Witness(w.url, note.parse_vkey(w.vkey))
        assert witness.add_checkpoint(client, 0, [], _signed(key, tree, 8)).status == "cosigned"
        # another history of the same origin, from size 0: the witness saw size 8
        answer = witness.add_checkpoint(client, 0, [], _signed(key, fork, 9))
        assert (answer.status, answer.size) == ("conflict", 8)
        # claiming the witness's size with a proof of another tree: 422, no cosignature
        bad = witness.add_checkpoint(client, 8, fork.consistency_proof(8, 9), _signed(key, fork, 9))
        assert bad.status == "error" and bad.detail == "HTTP 422"
        assert w.answers == [200, 409, 422]


def test_a_checkpoint_signed_by_an_untrusted_key_is_forbidden():
    _, trust = _log()
    other = note.Signer(Ed25519PrivateKey.generate())
    tree = merkle.Tree([os.urandom(32)])
    with Witness("witness.test/w1", trust) as w:
        client = witness.Witness(w.url, note.parse_vkey(w.vkey))
        answer = witness.add_checkpoint(client, 0, [], _signed(other, tree, 1))
        assert answer.detail == "HTTP 403"


def test_a_cosignature_that_does_not_verify_is_an_error_not_a_cosignature():
    key, trust = _log()
    tree = merkle.Tree([os.urandom(32)])
    with Witness("witness.test/w1", trust) as w:
        impostor = Witness("witness.test/w1", trust)  # same name, another key
        client = witness.Witness(w.url, note.parse_vkey(impostor.vkey))
        answer = witness.add_checkpoint(client, 0, [], _signed(key, tree, 1))
        assert answer.status == "error" and answer.cosignatures == []


def test_the_config_takes_one_witness_or_a_list_and_says_what_it_refuses():
    w = Witness("witness.test/w1", lambda o: None)
    ws, problems = witness.configured({"ways": {"witness": {"url": "http://x/", "key": w.vkey}}})
    assert [x.url for x in ws] == ["http://x"] and problems == []
    log_key = note.Signer(Ed25519PrivateKey.generate()).verifier("log").vkey
    ws, problems = witness.configured(
        {
            "ways": {
                "witness": [{"url": "ftp://x", "key": w.vkey}, {"url": "http://y", "key": log_key}]
            }
        }
    )
    assert ws == [] and len(problems) == 2 and "type 0x04" in problems[1]
    entry = {"url": "http://x", "key": w.vkey}
    ws, problems = witness.configured({"ways": {"witness": [{**entry, "log": "machine"}]}})
    assert [x.log for x in ws] == ["machine"] and problems == []
    ws, problems = witness.configured({"ways": {"witness": {**entry, "log": "everything"}}})
    assert ws == [] and problems == ["ways.witness: log must be one of sessions, machine, all"]


def test_a_witness_that_answers_a_byte_at_a_time_is_cut_off_at_the_deadline(install, tmp_path):
    """The 5 s bound is a deadline for the whole answer, not a timeout per read: a real
    dispatcher delivers every record and its checkpoint, cuts the witness off (it sees
    the client hang up long before its answer is over), counts and logs the error."""
    import json

    from ..conftest import payload
    from ..helpers import spool_directly
    from .runs import EVERY_BATCH, audited, calls, dispatch

    w = Witness("witness.test/w1", lambda origin: None)  # only for a cosigner key
    slow = Server("trickle")  # its answer, a byte a second, would take 40 s
    try:
        config = install.root / "config" / "agent-ways" / "config.yaml"
        config.parent.mkdir(parents=True, exist_ok=True)
        witness = f"  witness:\n    url: '{slow.url}'\n    key: '{w.vkey}'\n"
        config.write_text("ways:\n" + EVERY_BATCH + witness)  # a checkpoint per batch
        out = tmp_path / "audit.jsonl"
        audited(install, out, batch="{max_records: 1}")
        spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 3)])
        spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
        dispatch(install)
        assert slow.hung_up.wait(10)
    finally:
        slow.close()
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["rule_seq"] for r in rows if r["section"] != "checkpoint"] == [1, 2, 3, 4, 5]
    # each batch still signed, and the end (its own checkpoint)
    assert sum(r["section"] == "checkpoint" for r in rows) >= 5
    log = [json.loads(x) for x in (install.state_root / "events.log").read_text().splitlines()]
    errors = [e for e in log if e["kind"] == "evidence.witness_error"]
    assert errors and errors[0]["detail"] == "deadline"
    assert len(slow.requests) == 1  # then left alone: its backoff, not a wait per batch
