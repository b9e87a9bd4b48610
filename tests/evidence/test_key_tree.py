"""The key tree (evidence/keytree.py) at 10,000 epochs: what a consumer is sent stays
small enough for a UDP syslog datagram and rsyslog's default 8 KiB message, and the
consumer's copy, as rsyslog stored it, verifies with `--key` from the root alone.
Real processes: the dispatcher, rsyslogd on a loopback UDP port, `ways sensors verify`."""

from __future__ import annotations

import json

import pytest

from ways_sensors.evidence import keytree, note
from ways_sensors.evidence.keys import Keyring

from ..conftest import payload
from ..helpers import spool_directly
from ..rsyslog import Rsyslog
from . import independent as ind
from .runs import calls, dispatch, every_batch, root_vkey

EPOCHS = 10_000


def _siem(install, port: int) -> None:
    install.sensor(
        "siem",
        "enabled: true\nrules:\n  all:\n    sections: [tool_call, session_start, session_end]\n"
        "    chain: true\n    batch: {max_records: 1}\n"
        f"    dispatch: {{syslog: {{host: 127.0.0.1, port: {port}, protocol: udp}}}}\n",
    )


@pytest.mark.slow
def test_at_10000_epochs_a_consumers_copy_through_rsyslog_udp_verifies(install, tmp_path):
    ring = Keyring(install.layout)
    ring.ensure()
    ring.rollover(to=EPOCHS)  # as many rollovers would leave it: the path to 10,000
    server = Rsyslog(tmp_path / "rsyslog", "udp", max_message=None)  # 8 KiB: the default
    try:
        every_batch(install)  # a checkpoint per batch (evidence/cadence.py at 0)
        _siem(install, server.port)
        spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 4)])
        spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
        dispatch(install)
        got = server.wait_for(13)  # six records, each with its checkpoint, and the end
    finally:
        server.close()
    msgs = [json.loads(m["msg"]) for m in got]
    cps = [m for m in msgs if m.get("section") == "checkpoint"]
    assert len(msgs) == 13 and len(cps) == 7
    first = cps[0]
    assert first["epoch"] > EPOCHS  # this run rolled over once more
    # the path from the root: the spine and one certificate per level above the leaf
    assert len(first["keys"]) == len(keytree.path(first["epoch"])) == 8
    assert all(c["keys"] == [] for c in cps[1:])  # sent once per tree
    proven = ind.key_tree(root_vkey(install), first["keys"])
    assert first["epoch"] in proven
    origin = ind.checkpoint_body(first["checkpoint"])[0]
    assert ind.signed_by(first["checkpoint"], origin, proven[first["epoch"]])
    copy = tmp_path / "from-rsyslog.jsonl"  # the consumer's copy, as rsyslog stored it
    copy.write_text("".join(m["msg"] + "\n" for m in got))
    r = install.ways("sensors", "verify", str(copy), "--key", root_vkey(install), "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    evidence = json.loads(r.stdout)["evidence"]
    assert evidence["ok"] and evidence["trees"][0]["signed_size"] == 7  # 6 records, an end


def test_a_rollover_reads_one_certificate_per_level_never_the_earlier_epochs(tmp_path):
    """What a rollover and a start read does not grow with the past: at epoch 10,000 the
    certificates on disk number thousands, the path to the current key eight."""
    from ways_sensors.state.layout import Layout

    ring = Keyring(Layout(str(tmp_path / "state")), epoch_seconds=3600)
    root = ring.ensure()
    ring.rollover(to=EPOCHS)
    for _ in range(5):
        ring.rollover()
    path = ring.path_certificates(ring.epoch())
    assert len(path) == 8 and sum(len(c) for c in path) < 4096
    publics = ind.key_tree(root.vkey, path)
    leaf = keytree.path(ring.epoch())[-1]
    assert publics[ring.epoch()] == ring._load(leaf).public
    # every key file left is the current leaf or a root of a later subtree
    assert all(keytree.span(n[4:-4])[1] > ring.epoch() for n in ring.key_files())
    assert note.split_notes(ring.chain_text())  # `ways keys chain` still lists them
