"""The machine log (issue 35 item 6): real dispatchers append every session tree's
checkpoints to one tlog-tiles log per install; a witness written from the tlog-witness
text, configured with exactly one origin and one key (as a stock witness is), cosigns
it across sessions and dispatcher restarts; the spec-written tile client reads it over
a loopback static server and checks consistency; `ways sensors verify --machine-log`
names a session whose file was deleted whole."""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from . import independent as ind
from . import tile_reader
from .runs import EVERY_BATCH, PY, root_vkey, session, spooled
from .witness_server import Witness

SESSIONS = 20  # each its own dispatcher run: 20 restarts of the log's writer


def _machine_key(install) -> tuple[str, str, bytes]:
    r = install.ways("keys", "show", "--json")
    assert r.returncode == 0, r.stderr
    log = json.loads(r.stdout)["machine_log"]
    name, _, kind, public = ind.parse_vkey(log["verifier_key"])
    assert kind == 1 and name == log["origin"]
    return log["verifier_key"], name, public


def _setup(install, tmp_path, w: Witness) -> None:
    out = tmp_path / "audit" / "{session_id}.jsonl"
    install.sensor(
        "audit",
        "enabled: true\nrules:\n  all:\n    chain: true\n    delivery: at_least_once\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n",
    )
    install.config(
        "ways:\n"
        + EVERY_BATCH
        + "    machine_log_seconds: 0\n"
        + f"  witness: {{url: '{w.url}', key: '{w.vkey}', log: machine}}\n"
    )


def _one_origin(name: str, public: bytes):
    """A stock witness's configuration: one origin, one key; every other origin unknown."""
    return lambda origin: [(name, public)] if origin == name else None


def _verify(install, *args: str):
    return install.ways("sensors", "verify", *args)


def test_a_stock_witness_cosigns_the_machine_log_and_verify_names_a_deleted_session(
    install, tmp_path
):
    vkey, name, public = _machine_key(install)
    prefix = install.state_root / "machine-log"
    with Witness("witness.test/stock", lambda origin: None) as w:
        w.trust = _one_origin(name, public)
        _setup(install, tmp_path, w)
        sids = [f"s{i:02d}-machine-log" for i in range(SESSIONS)]
        session(install, sids[0])
        session(install, sids[1])
        with tile_reader.serving(str(prefix)) as base:  # a static file server, as it lies
            _, early_size, early_root, _ = tile_reader.read_log(base, name, public)
        for sid in sids[2:]:
            session(install, sid)  # each its own dispatcher: a restart for the log
        assert 404 not in w.answers and w.answers.count(200) >= SESSIONS
        assert w.answers == [200] * len(w.answers)
        with tile_reader.serving(str(prefix)) as base:
            note, size, root, entries = tile_reader.read_log(base, name, public)
            assert tile_reader.consistent(base, early_size, early_root, size)
        assert 0 < early_size < size
        assert w.state[name] == (size, root)  # the witness follows the log to its end
        assert ind.cosigned_by(note, w.name, w.public) is not None
    # every entry is a session tree's signed checkpoint, every session in it, or a key
    # certificate: from those alone the independent verifier proves each checkpoint's
    # key from the root key
    notes = [e.decode() for e in entries]
    certs = [n for n in notes if "/keys/" in ind.checkpoint_body(n)[0]]
    cps = [n for n in notes if n not in certs]
    assert {ind.checkpoint_body(n)[0].rsplit("/", 1)[1] for n in cps} == set(sids)
    assert len(certs) == len(set(certs))  # each logged once
    epochs = ind.key_tree(root_vkey(install), certs)
    for n in cps:
        origin = ind.checkpoint_body(n)[0]
        assert any(ind.signed_by(n, origin, k) for k in epochs.values()), origin
    for folder, _, files in os.walk(prefix):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
        for f in files:
            assert stat.S_IMODE(os.stat(os.path.join(folder, f)).st_mode) == 0o600
    audit = tmp_path / "audit"
    args = (str(audit), "--machine-log", str(prefix), "--machine-key", vkey)
    r = _verify(install, *args)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"machine log: {SESSIONS} session(s)" in r.stdout
    r = _verify(install, *args, "--witness-key", w.vkey)  # the checkpoint the witness cosigned
    assert r.returncode == 0 and "cosigned by the witness" in r.stdout, r.stdout
    (audit / f"{sids[3]}.jsonl").unlink()  # a whole session's file deleted
    assert _verify(install, str(audit)).returncode == 0  # the chains alone cannot tell
    r = _verify(install, *args)
    assert r.returncode == 3, r.stdout + r.stderr
    assert f"not proven (missing): session {sids[3]}" in r.stdout
    assert sum("not proven" in line for line in r.stdout.splitlines()) == 1
    r = _verify(install, *args, "--json")
    problems = json.loads(r.stdout)["machine_log"]["problems"]
    assert [(p["kind"], p["session_id"]) for p in problems] == [("missing", sids[3])]
    assert json.loads(r.stdout)["machine_log"]["certificates"] == len(certs)
    # another key: the log's checkpoint is not proven
    pub = Ed25519PrivateKey.generate().public_key().public_bytes_raw()
    kid = ind.ed25519_key_id(name, pub).hex()
    other = f"{name}+{kid}+{base64.b64encode(bytes([1]) + pub).decode()}"
    r = _verify(install, str(audit), "--machine-log", str(prefix), "--machine-key", other)
    assert r.returncode == 3 and "no known key signed" in r.stdout, r.stdout


def test_a_session_cut_at_its_end_is_named_by_the_machine_log(install, tmp_path):
    """A session whose file lost its last records and their checkpoints: the machine
    log still holds its closing checkpoint."""
    _, name, public = _machine_key(install)
    with Witness("witness.test/stock", _one_origin(name, public)) as w:
        _setup(install, tmp_path, w)
        session(install, "cut-at-end")
    path = tmp_path / "audit" / "cut-at-end.jsonl"
    lines = path.read_text().splitlines()
    last_cp = max(i for i, x in enumerate(lines) if json.loads(x)["section"] == "checkpoint")
    path.write_text("".join(x + "\n" for x in lines[:last_cp]))
    r = _verify(install, str(path), "--machine-log", str(install.state_root / "machine-log"))
    assert r.returncode == 3, r.stdout + r.stderr
    assert "not proven (absent): session cut-at-end" in r.stdout


def test_a_forked_machine_log_gets_the_witness_409_and_the_alarm(install, tmp_path):
    """The log lost (or rewritten from scratch) on this machine: the witness, which
    cosigned a larger tree of this origin, refuses the new history with 409; the
    dispatcher counts and shows the alarm."""
    _, name, public = _machine_key(install)
    with Witness("witness.test/stock", _one_origin(name, public)) as w:
        _setup(install, tmp_path, w)
        session(install, "before-fork-1")
        session(install, "before-fork-2")
        witnessed = w.state[name][0]
        shutil.rmtree(install.state_root / "machine-log")
        (install.state_root / "machine-log.json").unlink()
        session(install, "after-fork")
        assert 409 in w.answers
        assert w.state[name][0] == witnessed  # the fork was never cosigned
    events = (install.state_root / "events.log").read_text()
    assert "evidence.witness_conflict" in events and "machine" in events
    r = install.ways("status")
    assert "ALARM" in r.stdout, r.stdout


def test_dispatchers_running_at_once_append_one_log(install, tmp_path):
    """Three sessions' dispatchers at the same time: the lock makes their appends one
    history, which the tile client reads whole and verify finds every session of."""
    _, name, public = _machine_key(install)
    sids = [f"together-{i}" for i in range(3)]
    with Witness("witness.test/stock", _one_origin(name, public)) as w:
        _setup(install, tmp_path, w)
        for sid in sids:
            spooled(install, sid)
        argv = [str(Path(PY).parent / "ways"), "sensors", "dispatch", "--idle", "0.5"]
        procs = [
            subprocess.Popen([*argv, "--session", sid], env=install.env, stdin=subprocess.DEVNULL)
            for sid in sids
        ]
        assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
        assert 409 not in w.answers
    prefix = install.state_root / "machine-log"
    with tile_reader.serving(str(prefix)) as base:
        _, _, _, entries = tile_reader.read_log(base, name, public)
    origins = [ind.checkpoint_body(e.decode())[0] for e in entries]
    assert {o.rsplit("/", 1)[1] for o in origins if "/keys/" not in o} == set(sids)
    r = _verify(install, str(tmp_path / "audit"), "--machine-log", str(prefix))
    assert r.returncode == 0 and "machine log: 3 session(s)" in r.stdout, r.stdout


def test_a_machine_log_that_cannot_be_written_never_holds_the_records_back(install, tmp_path):
    """A planted link where the log's folder goes: refused (secure.py), counted and shown
    by `ways status`; the session's records and checkpoints reach the consumer all the
    same."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    install.state_root.mkdir(parents=True, exist_ok=True)
    os.symlink(elsewhere, install.state_root / "machine-log")
    _, name, public = _machine_key(install)
    with Witness("witness.test/stock", _one_origin(name, public)) as w:
        _setup(install, tmp_path, w)
        session(install, "unwritable")
        assert w.answers == []
    assert list(elsewhere.iterdir()) == []
    out = tmp_path / "audit" / "unwritable.jsonl"
    assert _verify(install, str(out)).returncode == 0
    r = install.ways("status", "--json")
    evidence = json.loads(r.stdout)["evidence"]
    assert sum(e["machine_log_errors"] for e in evidence) >= 1, evidence
    assert "not in the machine log" in install.ways("status").stdout


def test_a_failing_witness_is_left_alone_by_the_next_dispatchers(install, tmp_path):
    """A witness that does not know the log (404 here; a hung one costs the deadline)
    is asked once, then rested across processes: the next dispatchers' exits do not
    ask it again within the backoff, and their log is signed all the same."""
    _, name, _ = _machine_key(install)
    with Witness("witness.test/stock", lambda origin: None) as w:
        _setup(install, tmp_path, w)
        for sid in ("rest-1", "rest-2", "rest-3"):
            session(install, sid)
        assert w.answers == [404]
    st = json.loads((install.state_root / "machine-log.json").read_text())
    assert st["size"] == st["signed"] > 0 and list(st["resting"]) == [w.url]
    note = (install.state_root / "machine-log" / "checkpoint").read_text()
    assert ind.checkpoint_body(note)[:2] == (name, st["size"])
