"""`ways sensors verify FILES --key ROOTKEY [--checkpoints FILE] [--witness-key KEY]` on a
real session's output, and the strongest same-user attack on it; `ways status`'s
alarm when a witness refuses a forked history. Real processes throughout: the
dispatcher, the `ways` command, the witness on a loopback port."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ways_sensors.evidence import keytree, merkle, note
from ways_sensors.evidence.carry import end_leaf
from ways_sensors.evidence.keys import Keyring
from ways_sensors.pipeline import chain

from ..conftest import payload
from ..helpers import SID, spool_directly
from . import independent as ind
from .runs import EVERY_BATCH, audited, calls, dispatch, every_batch, root_vkey, trusting
from .witness_server import Witness


@pytest.fixture
def witnessed(install, tmp_path):
    """A session of eight records, each its own batch, each checkpoint cosigned by the
    witness (a checkpoint per batch: evidence/cadence.py at 0), and the end that closes
    the tree; the notes the witness received, kept off the machine."""
    out = tmp_path / "audit.jsonl"
    with Witness("witness.test/w1", trusting(install)) as w:
        (install.root / "config").mkdir(exist_ok=True)
        (install.root / "config" / "agent-ways").mkdir(exist_ok=True)
        config = install.root / "config" / "agent-ways" / "config.yaml"
        config.write_text(
            f"ways:\n  witness:\n    url: '{w.url}'\n    key: '{w.vkey}'\n{EVERY_BATCH}"
        )
        install.sensor(
            "audit",
            "enabled: true\nrules:\n  all:\n    chain: true\n    delivery: at_least_once\n"
            f"    batch: {{max_records: 1}}\n    dispatch: {{file: {{path: '{out}'}}}}\n",
        )
        received: list[str] = []
        real = w.add_checkpoint

        def keep(body: bytes):
            status, answer, ctype = real(body)
            if status == 200:  # what the witness saw and cosigned, kept elsewhere
                received.append(body.decode().partition("\n\n")[2] + answer.decode())
            return status, answer, ctype

        w.add_checkpoint = keep  # type: ignore[method-assign]
        spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 6)])
        spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
        dispatch(install)
        elsewhere = tmp_path / "witness-checkpoints.txt"
        elsewhere.write_text("\n".join(received))
        yield install, out, elsewhere, w


def ways_verify(install, *args: str) -> tuple[int, dict]:
    r = install.ways("sensors", "verify", *args, "--json")
    assert r.stderr == "" or r.returncode != 0, r.stderr
    return r.returncode, json.loads(r.stdout)


def test_verify_with_the_root_key_accepts_the_session(witnessed):
    install, out, elsewhere, w = witnessed
    vkey = root_vkey(install)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    cps = [r for r in lines if r["section"] == "checkpoint"]
    assert len(cps) == 9 and all(ind.cosigned_by(c["checkpoint"], w.name, w.public) for c in cps)
    assert [c.get("end", False) for c in cps] == [False] * 8 + [True]  # the tree's end
    code, data = ways_verify(install, str(out), "--key", vkey)
    assert code == 0, data["evidence"]["breaks"]
    [tree] = data["evidence"]["trees"]
    assert (tree["records"], tree["signed_size"], tree["checkpoints"]) == (8, 9, 9)
    code, data = ways_verify(
        install, str(out), "--key", vkey, "--checkpoints", str(elsewhere), "--witness-key", w.vkey
    )
    assert code == 0, data["evidence"]["breaks"]
    assert data["evidence"]["trees"][0]["cosigned"] == 9
    human = install.ways("sensors", "verify", str(out), "--key", vkey)
    assert human.returncode == 0 and "signed: 8 records in 1 tree(s)" in human.stdout


def test_another_root_key_proves_nothing(witnessed):
    install, out, _, _ = witnessed
    other = note.Signer(Ed25519PrivateKey.generate()).verifier("ways.sensors/x").vkey
    code, data = ways_verify(install, str(out), "--key", other)
    assert code == 3 and data["evidence"]["breaks"][0]["kind"] == "unsigned"
    r = install.ways("sensors", "verify", str(out), "--key", "not-a-key")
    assert r.returncode == 2 and "`ways keys show`" in r.stderr


def reseal(install, out: Path, edit_seq: int, extra: tuple[int, ...] = ()) -> None:
    """The strongest same-user attack: edit one record, re-chain everything after it,
    re-sign every checkpoint with the key the state root holds now, and rewrite the
    stored head to match. Only signatures of earlier epochs are out of reach. `extra`:
    sizes at which the attacker adds checkpoints of their own, after the record that
    ends each, in between the real ones."""
    keys_dir = install.state_root / "keys"
    ring = Keyring(install.layout)
    epoch = ring.epoch()
    pem = keys_dir / f"key-{keytree.path(epoch)[-1]}.pem"  # the current epoch's key
    current = note.Signer(serialization.load_pem_private_key(pem.read_bytes(), None))
    certs = ring.path_certificates(epoch)  # public: the newest too
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    next(r for r in lines if r["section"] == "checkpoint")["keys"] = certs
    prev, leaves, rewritten = chain.GENESIS, [], []
    for rec in lines:
        if rec["section"] == "checkpoint":
            if rec.get("end"):  # the end leaf stays where it was
                leaves.append(end_leaf(len(leaves)))
            tree = merkle.Tree(leaves)
            origin, size, _, _ = ind.checkpoint_body(rec["checkpoint"])
            cp = note.checkpoint(origin, size, tree.root(size))
            rec["checkpoint"] = str(note.Note(cp.text, [current.sign(cp.text, origin)]))
            old = rec["consistency"]["from"]
            rec["consistency"]["proof"] = [note.b64(h) for h in tree.consistency_proof(old, size)]
            if "leaves" in rec:  # unsigned: the attacker makes them match too
                rec["leaves"] = note.b64(b"".join(leaves[old:size]))
            rec["epoch"] = epoch
        else:
            if rec["rule_seq"] == edit_seq:
                rec["data"]["input"]["command"] = "echo nothing to see"
            rec.pop("chain")
            prev = chain.seal(rec, prev)
            leaves.append(bytes.fromhex(prev))
        rewritten.append(json.dumps(rec))
        if rec["section"] != "checkpoint" and len(leaves) in extra:
            size, tree = len(leaves), merkle.Tree(leaves)
            origin = f"{root_vkey(install).split('+')[0]}/audit/all/{SID}"
            cp = note.checkpoint(origin, size, tree.root(size))
            own = {"schema": "ways.sensor.checkpoint/1", "section": "checkpoint",
                   "sensor": "audit", "rule": "all", "session_id": SID, "epoch": epoch,
                   "checkpoint": str(note.Note(cp.text, [current.sign(cp.text, origin)])),
                   "consistency": {"from": size - 1, "proof": []}, "keys": [],
                   "leaves": note.b64(leaves[-1])}  # fmt: skip
            rewritten.append(json.dumps(own))
    out.write_text("\n".join(rewritten) + "\n")
    ledger = install.state_root / "ledger" / f"{SID}.json"
    doc = json.loads(ledger.read_text())
    doc["rules"]["audit/all"] = [doc["rules"]["audit/all"][0], prev]
    ledger.write_text(json.dumps(doc))


def test_a_resealed_file_is_caught_by_checkpoints_received_elsewhere(witnessed):
    install, out, elsewhere, _ = witnessed
    vkey = root_vkey(install)
    Keyring(install.layout).rollover()  # a later session: the attacker holds only its key
    reseal(install, out, edit_seq=4)
    # every local check passes: the chain, the stored head, the re-signed checkpoints
    assert ways_verify(install, str(out), "--rule", "audit/all")[0] == 0
    code, data = ways_verify(install, str(out), "--key", vkey)
    assert code == 0, data["evidence"]["breaks"]
    # the checkpoints the witness received name the first record that differs
    code, data = ways_verify(install, str(out), "--key", vkey, "--checkpoints", str(elsewhere))
    assert code == 3
    first = data["evidence"]["breaks"][0]
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    line = next(n for n, r in enumerate(rows, 1) if r.get("rule_seq") == 4)
    assert (first["kind"], first["rule_seq"], first["line"]) == ("differs", 4, line)
    assert "rule_seq 4" in first["message"]
    kinds = {b["kind"] for b in data["evidence"]["breaks"]}
    assert "fork" in kinds  # two signed histories at one size: a compromise shows
    human = install.ways(
        "sensors", "verify", str(out), "--key", vkey, "--checkpoints", str(elsewhere)
    )
    assert human.returncode == 3 and "not proven (differs): rule_seq 4" in human.stdout


def test_a_witness_refuses_a_forked_history_and_status_shows_the_alarm(witnessed):
    install, _, _, w = witnessed
    (origin, (size, _)) = next(iter(w.state.items()))
    assert size == 9  # eight records and the end
    # the attacker wipes the session's stored state and records another history of it
    ledger = install.state_root / "ledger" / f"{SID}.json"
    ledger.unlink()
    spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(50, 53)])
    spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
    dispatch(install)
    assert 409 in w.answers
    assert w.state[origin][0] == 9  # the witness kept the history it cosigned
    r = install.ways("status", "--json")
    [ev] = [e for e in json.loads(r.stdout)["evidence"] if e["rule"] == "audit/all"]
    assert ev["witness_conflicts"] >= 1
    human = install.ways("status")
    assert "ALARM audit/all: a witness refused" in human.stdout
    log = (install.state_root / "events.log").read_text().splitlines()
    conflicts = [json.loads(x) for x in log if "evidence.witness_conflict" in x]
    assert conflicts and conflicts[0]["witness_size"] == 9 and not conflicts[0]["resolved"]


def test_records_without_checkpoints_are_unsigned_unless_the_hook_numbered_them(tmp_path):
    from ways_sensors.evidence import offline

    root = note.Signer(Ed25519PrivateKey.generate()).verifier("r")
    lines = []
    for i, seq in ((1, 7), (2, None)):  # an async record, then a blocking rule's
        rec = {"section": "tool_call", "seq": seq, "session_id": "s", "sensor": "a",
               "rule": "blk" if seq is None else "async", "rule_seq": i}  # fmt: skip
        chain.seal(rec, chain.GENESIS)
        lines.append(json.dumps(rec))
    fired = {"section": "way_event", "seq": 1, "session_id": "ways-fire", "sensor": "a",
             "rule": "async", "rule_seq": 1, "test": True}  # fmt: skip
    chain.seal(fired, chain.GENESIS)
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([*lines, json.dumps(fired)]) + "\n")
    result = offline.verify([str(path)], root)
    assert [(b.kind, b.session_id, b.line) for b in result.breaks] == [("unsigned", "s", 1)]


def test_the_first_record_that_differs_is_named_exactly_inside_a_batch(install, tmp_path):
    """Batches of five: a witness's notes alone narrow the edit to the batch that holds
    it; another consumer's copy of the batch's checkpoint record (its leaves rebuild the
    signed root) names the record itself."""
    out = tmp_path / "audit.jsonl"
    audited(install, out, batch="{max_records: 5}")
    every_batch(install)
    spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 13)])
    spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
    dispatch(install)
    vkey = root_vkey(install)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    cps = [r for r in rows if r["section"] == "checkpoint"]
    assert [len(base64.b64decode(c["leaves"])) for c in cps] == [5 * 32] * 3 + [32]  # + end
    copy = tmp_path / "consumer-elsewhere.jsonl"  # what another consumer received
    copy.write_text(out.read_text())
    notes = tmp_path / "witness-notes.txt"  # what a witness received: the notes alone
    notes.write_text("\n".join(c["checkpoint"] for c in cps))
    Keyring(install.layout).rollover()
    reseal(install, out, edit_seq=8)  # in the second batch, rule_seq 6..10
    assert ways_verify(install, str(out), "--key", vkey)[0] == 0  # re-signed: passes alone
    line = next(n for n, r in enumerate(rows, 1) if r.get("rule_seq") == 8)

    code, data = ways_verify(install, str(out), "--key", vkey, "--checkpoints", str(copy))
    first = data["evidence"]["breaks"][0]
    assert code == 3 and (first["kind"], first["rule_seq"], first["line"]) == ("differs", 8, line)
    assert first["message"].startswith(f"rule_seq 8 ({out} line {line}) differs")

    code, data = ways_verify(install, str(out), "--key", vkey, "--checkpoints", str(notes))
    first = data["evidence"]["breaks"][0]
    assert code == 3 and (first["kind"], first["rule_seq"]) == ("differs", 6)
    assert "one of rule_seq 6..10" in first["message"]  # the batch that holds the edit

    # the attacker's own checkpoints in between the trusted ones (re-signed after T,
    # agreeing with the rewritten records) must not move the search past rule_seq 8
    reseal(install, out, edit_seq=8, extra=(8, 9))
    code, data = ways_verify(install, str(out), "--key", vkey, "--checkpoints", str(copy))
    first = data["evidence"]["breaks"][0]
    assert code == 3 and (first["kind"], first["rule_seq"]) == ("differs", 8), first

    # the leaves must rebuild the signed root: forged ones are not believed
    forged = [json.loads(x) for x in copy.read_text().splitlines()]
    for r in forged:
        if r["section"] == "checkpoint":
            r["leaves"] = note.b64(bytes(32) * 5)
    copy.write_text("".join(json.dumps(r) + "\n" for r in forged))
    code, data = ways_verify(install, str(out), "--key", vkey, "--checkpoints", str(copy))
    assert code == 3 and data["evidence"]["breaks"][0]["rule_seq"] == 6


def test_a_line_over_the_cap_is_never_held_whole_by_verify_key(tmp_path, monkeypatch):
    """`verify --key` read a whole line before checking its length (a 600 MB line took
    1,246 MiB). Now it reads as the chain check does: a line over the cap (1 MiB here,
    the seam) is skipped in chunks; its memory stays near the cap, not the line."""
    import tracemalloc

    from ways_sensors.evidence import offline
    from ways_sensors.verify import read

    monkeypatch.setattr(read, "LINE_CAP", 1 << 20)
    rec = {"section": "tool_call", "seq": 1, "session_id": "s", "sensor": "a", "rule": "r",
           "rule_seq": 1}  # fmt: skip
    chain.seal(rec, chain.GENESIS)
    path = tmp_path / "long.jsonl"
    with open(path, "wb") as f:
        f.write(b'{"pad": "' + b"x" * (40 << 20) + b'"}\n')
        f.write(json.dumps(rec).encode() + b"\n")
    root = note.Signer(Ed25519PrivateKey.generate()).verifier("r")
    tracemalloc.start()
    try:
        result = offline.verify([str(path)], root)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak  # the line is 40 MiB
    assert [(b.kind, b.line) for b in result.breaks] == [("unsigned", 2)]  # the record read


def test_a_deleted_sessions_file_is_a_break_with_all_present(witnessed, tmp_path):
    """The session's whole file is gone; the witness's checkpoints for it are in hand:
    listed as absent (exit 0) by default, a `missing` break with --all-present."""
    install, out, elsewhere, w = witnessed
    vkey = root_vkey(install)
    out.unlink()  # the whole session's file
    other = tmp_path / "another-day.jsonl"  # what is left to verify
    other.write_text("")
    held = tmp_path / "held-elsewhere.txt"  # the witness's notes, `ways keys chain` kept
    held.write_text(elsewhere.read_text() + "\n" + install.ways("keys", "chain").stdout)
    args = (str(other), "--key", vkey, "--checkpoints", str(held))
    code, data = ways_verify(install, *args, "--witness-key", w.vkey)
    assert code == 0 and len(data["evidence"]["absent"]) == 1, data
    code, data = ways_verify(install, *args, "--witness-key", w.vkey, "--all-present")
    [brk] = data["evidence"]["breaks"]
    assert code == 3 and brk["kind"] == "missing" and brk["session_id"] == SID
    assert "sign 9 leaves; the files hold none" in brk["message"]  # 8 records, an end
    human = install.ways("sensors", "verify", *args, "--all-present")
    assert human.returncode == 3 and "not proven (missing)" in human.stdout
