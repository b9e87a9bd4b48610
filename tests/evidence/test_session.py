"""A real session's checkpoints, checked by the independent verifier (tests/evidence/
independent.py, written from RFC 6962/9162 and the C2SP texts alone): the dispatcher
as a real detached process, two runs of it (two key epochs), several batches."""

from __future__ import annotations

import json
from pathlib import Path

from ..conftest import payload
from ..helpers import SID, set_pending, spool_directly
from . import independent as ind
from .runs import audited, calls, dispatch, every_batch, private_keys_under, root_vkey, with_ends


def run_session(install, out: Path) -> None:
    audited(install, out, batch="{max_records: 7}")
    every_batch(install)  # a checkpoint per batch: several in each run
    spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 20)])
    dispatch(install)  # the first run: epoch 1
    spool_directly(install, [*calls(20, 33), ("SessionEnd", payload("SessionEnd"))])
    dispatch(install)  # a second run of the same session: epoch 2


def test_the_independent_verifier_accepts_a_real_sessions_checkpoints(install, tmp_path):
    out = tmp_path / "audit.jsonl"
    run_session(install, out)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    records = [r for r in lines if r["section"] != "checkpoint"]
    cps = [r for r in lines if r["section"] == "checkpoint"]
    assert len(records) == 35 and len(cps) >= 7  # batches of at most 7 records, two ends
    assert [r["rule_seq"] for r in records] == list(range(1, 36))
    # each run ended its tree: a leaf after its last record, the end's checkpoint says so
    assert [c["checkpoint"].split("\n")[1] for c in cps if c.get("end")] == ["22", "37"]
    leaves = with_ends(records, cps)  # the end leaf's text is docs/evidence.md's
    assert len(leaves) == 37
    seq_at = {}  # tree size -> the rule_seq of its last record
    n = 0
    for i, leaf in enumerate(leaves):
        n += leaf in {bytes.fromhex(r["chain"]["hash"]) for r in records}
        seq_at[i + 1] = n

    vkey = root_vkey(install)
    keys = ind.key_tree(vkey, [c for cp in cps for c in cp["keys"]])
    assert {1, 3} <= set(keys)  # a new key for each dispatcher run
    name = vkey.split("+")[0]
    prev_size, prev_root = 0, ind.sha256(b"")
    epochs = []
    for cp in cps:
        origin, size, root, ext = ind.checkpoint_body(cp["checkpoint"])
        assert origin == f"{name}/audit/all/{SID}" and ext == []
        assert ind.signed_by(cp["checkpoint"], origin, keys[cp["epoch"]])
        others = [k for e, k in keys.items() if e != cp["epoch"]]
        assert not any(ind.signed_by(cp["checkpoint"], origin, k) for k in others)
        assert root == ind.mth(leaves[:size])
        proof = [ind.base64.b64decode(h) for h in cp["consistency"]["proof"]]
        assert cp["consistency"]["from"] == prev_size
        assert ind.verify_consistency(prev_size, size, prev_root, root, proof)
        assert cp["last_rule_seq"] == seq_at[size]
        prev_size, prev_root = size, root
        epochs.append(cp["epoch"])
    # a new key at each run's start (1, 3), and one at each exit (2: destroyed unused)
    assert epochs == sorted(epochs) and set(epochs) == {1, 3}
    assert prev_size == len(leaves)  # the records end where the last checkpoint says
    for i, leaf in enumerate(leaves):  # every record is in the last signed tree
        assert ind.verify_inclusion(leaf, i, prev_size, ind.path(i, leaves), prev_root)
    # the first checkpoint carried epoch 1's path (the spine, then s1's children: epoch
    # 3 is epoch 1's sibling), so the second run's carried no certificate again
    assert [ind.checkpoint_body(c)[0] for c in cps[0]["keys"]] == [
        f"{name}/keys/spine",
        f"{name}/keys/s1",
    ]
    first_of_run2 = next(cp for cp in cps if cp["epoch"] == 3)
    assert first_of_run2["keys"] == []


def test_a_session_killed_between_commit_and_leaves_keeps_its_tree(install, tmp_path):
    """The leaves file is written after the cursor: a run that finds it short completes
    it from the cursor's pending batch, and the checkpoints still verify."""
    out = tmp_path / "audit.jsonl"
    audited(install, out, batch="{max_records: 5}")
    every_batch(install)
    spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 9)])
    dispatch(install)
    leaves_file = install.sessions() / SID / "cursors" / "audit.all.leaves"
    data = leaves_file.read_bytes()
    assert len(data) == 11 * 32  # ten records and the end the idle exit signed
    leaves_file.write_bytes(data[: 7 * 32] + data[7 * 32 : 7 * 32 + 5])  # lost and torn
    spool_directly(install, [*calls(9, 12), ("SessionEnd", payload("SessionEnd"))])
    sent = [json.loads(x) for x in out.read_text().splitlines()]
    assert sent[-1].get("end") and sent[-2]["section"] == "checkpoint"
    unsent = [*sent[-5:-2], sent[-1]]  # records 8..10 and the end, one batch as if unsent
    set_pending(install, "audit.all", unsent)
    dispatch(install)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    records = {r["rule_seq"]: r for r in lines if r["section"] != "checkpoint"}
    cps = [r for r in lines if r["section"] == "checkpoint"]
    leaves = with_ends([records[s] for s in sorted(records)], cps)
    last = cps[-1]
    _, size, root, _ = ind.checkpoint_body(last["checkpoint"])
    assert size == len(leaves) == 16 and root == ind.mth(leaves)  # 14 records, two ends


def test_after_a_session_ends_no_key_file_can_sign_as_its_epochs(install, tmp_path):
    """A dispatcher that exits destroys the key that signed its checkpoints: every file
    under the state root that loads as a private key is tried, and none signs as an
    epoch that signed the session (a later key can only sign as a later epoch, which
    the checkpoints' epochs never go back to)."""
    out = tmp_path / "audit.jsonl"
    audited(install, out, batch="{max_records: 3}")
    spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 5)])
    spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
    dispatch(install)
    cps = [json.loads(x) for x in out.read_text().splitlines()]
    cps = [r for r in cps if r["section"] == "checkpoint"]
    keys = ind.key_tree(root_vkey(install), [c for cp in cps for c in cp["keys"]])
    signing = {cp["epoch"]: keys[cp["epoch"]] for cp in cps}
    assert signing  # the session was signed
    found = private_keys_under(install.state_root)
    assert found  # the later epochs' keys are there: none of them may sign as these
    origin = ind.checkpoint_body(cps[-1]["checkpoint"])[0]
    forged = f"{origin}\n9\n{ind.base64.b64encode(bytes(32)).decode()}\n"
    for path, key in found:
        sig = key.sign(forged.encode())
        for epoch, public in signing.items():
            kid = ind.ed25519_key_id(origin, public)
            note = f"{forged}\n{ind.EM_DASH} {origin} {ind.base64.b64encode(kid + sig).decode()}\n"
            assert not ind.signed_by(note, origin, public), f"{path} signs as epoch {epoch}"
