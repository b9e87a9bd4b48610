"""evidence/keys.py: epoch keys at rest, the certificate chain, and forward security."""

from __future__ import annotations

import json
import os
import stat

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ways_sensors.evidence import keytree, note
from ways_sensors.evidence.keys import Keyring
from ways_sensors.state.layout import Layout

from ..conftest import payload
from ..helpers import SID, spool_directly
from . import independent as ind
from .runs import audited, calls, dispatch, private_keys_under, root_vkey


def _ring(tmp_path):
    return Keyring(Layout(str(tmp_path / "state")), epoch_seconds=3600)


def test_keys_at_rest_are_pkcs8_pem_0600_in_a_0700_folder(tmp_path):
    ring = _ring(tmp_path)
    ring.ensure()
    folder = tmp_path / "state" / "keys"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    pem = folder / "key-s0.pem"  # epoch 0's, among the spine's
    assert {p.name for p in folder.glob("*.pem")} == {f"key-s{h}.pem" for h in range(16)}
    assert stat.S_IMODE(pem.stat().st_mode) == 0o600
    assert pem.read_text().startswith("-----BEGIN PRIVATE KEY-----")  # PKCS#8, unencrypted
    key = serialization.load_pem_private_key(pem.read_bytes(), None)
    assert isinstance(key, Ed25519PrivateKey)


def test_after_rollovers_no_key_left_verifies_under_an_earlier_epoch(tmp_path):
    ring = _ring(tmp_path)
    root = ring.ensure()
    for _ in range(9):
        ring.rollover()
    publics = ind.key_tree(root.vkey, note.split_notes(ring.chain_text()))
    assert ring.epoch() == 9 and set(range(10)) <= set(publics)
    keys = private_keys_under(tmp_path / "state")
    # the current key and the roots of the later subtrees: future epochs only
    assert len(keys) > 1 and any(p.endswith("key-s2-10.pem") for p, _ in keys)
    message = b"a checkpoint of an earlier epoch"
    signs_now = 0
    for path, key in keys:
        sig = key.sign(message)
        for epoch, public in publics.items():
            try:
                Ed25519PublicKey.from_public_bytes(public).verify(sig, message)
            except Exception:
                continue
            assert epoch >= 9, f"{path} signs for epoch {epoch}"
            signs_now += epoch == 9
    assert signs_now == 1  # the current epoch's key is there


def test_the_destroyed_key_is_overwritten_before_it_is_unlinked(tmp_path, monkeypatch):
    ring = _ring(tmp_path)
    ring.ensure()
    pem = tmp_path / "state" / "keys" / "key-s0.pem"
    before = pem.read_bytes()
    seen = {}
    real_unlink = os.unlink

    def unlink(path, *a, **kw):
        if str(path).endswith("key-s0.pem"):
            with open(path, "rb") as f:
                seen["bytes"] = f.read()
        return real_unlink(path, *a, **kw)

    monkeypatch.setattr(os, "unlink", unlink)
    ring.rollover()
    assert len(seen["bytes"]) == len(before) and seen["bytes"] != before
    assert b"PRIVATE KEY" not in seen["bytes"]
    assert not pem.exists()


def test_a_key_never_certified_is_replaced_at_the_next_rollover(tmp_path):
    """A SIGKILL between writing a node's children and certifying them leaves child key
    files no certificate names: the next rollover makes them again and certifies those."""
    ring = _ring(tmp_path)
    root = ring.ensure()
    stray = tmp_path / "state" / "keys" / "key-s1-0.pem"
    stray.write_bytes(
        Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    os.chmod(stray, 0o600)
    stray_public = serialization.load_pem_private_key(stray.read_bytes(), None).public_key()
    assert ring.rollover() == 1
    publics = ind.key_tree(root.vkey, note.split_notes(ring.chain_text()))
    assert publics[1] != stray_public.public_bytes_raw()
    assert ring._load("s1-0").public == publics[1]


def test_each_process_rolls_over_before_its_first_signature(tmp_path):
    first = _ring(tmp_path)
    epoch, _ = first.sign("a\n", "n")
    assert epoch == 1
    assert first.sign("b\n", "n")[0] == 1  # the same run keeps its epoch
    second = _ring(tmp_path)  # another dispatcher run
    assert second.sign("c\n", "n")[0] == 2
    assert first.sign("d\n", "n")[0] == 2  # the first one follows: its key is gone


def test_an_epoch_older_than_the_limit_rolls_over(tmp_path):
    ring = _ring(tmp_path)
    ring.sign("a\n", "n")
    pem = tmp_path / "state" / "keys" / "key-s1-0.pem"  # epoch 1's
    old = pem.stat().st_mtime - 7200
    os.utime(pem, (old, old))
    assert ring.sign("b\n", "n")[0] == 2


def test_key_files_are_written_and_read_as_cryptography_does_without_its_serialization(
    tmp_path,
):
    """keys.py writes the PKCS#8 PEM cryptography writes (byte for byte) without
    importing cryptography's serialization package (a dispatcher's start-up), reads
    those files back the same way, and reads any other PEM form of an Ed25519 key
    through cryptography, as before; another kind of key is still refused."""
    import subprocess
    import sys

    from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key

    from ways_sensors.evidence import keys
    from ways_sensors.evidence import pem as pem_of

    key = Ed25519PrivateKey.generate()
    pkcs8 = serialization.PrivateFormat.PKCS8
    want = key.private_bytes(serialization.Encoding.PEM, pkcs8, serialization.NoEncryption())
    assert pem_of.pem(key) == want == pem_of.encode(bytearray(key.private_bytes_raw()))
    ring = _ring(tmp_path)
    ring.ensure()
    folder = tmp_path / "state" / "keys"
    pem = folder / "key-s0.pem"
    epoch = "s0"
    public = ring._load(epoch).public  # read without cryptography's serialization
    pem.write_bytes(pem.read_bytes().replace(b"\n", b"\r\n"))  # a form _pem never writes
    assert ring._load(epoch).public == public  # read through cryptography
    pem.write_bytes(
        generate_private_key(SECP256R1()).private_bytes(
            serialization.Encoding.PEM, pkcs8, serialization.NoEncryption()
        )
    )
    try:
        ring._load(epoch)
        raise AssertionError("an EC key was loaded")
    except keys.KeyError_:
        pass
    code = (
        "import sys; from ways_sensors.evidence.keys import Keyring; "
        "from ways_sensors.state.layout "
        f"import Layout; r = Keyring(Layout({str(tmp_path / 'other')!r}), epoch_seconds=3600); "
        "r.sign('x\\n', 'n'); print('cryptography.hazmat.primitives.serialization' in sys.modules)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "False", r.stderr


@pytest.mark.parametrize("damage", ["swapped", "garbage", "empty"])
def test_a_damaged_key_is_never_used_and_signing_goes_on(install, tmp_path, damage):
    """The key file the next dispatcher run would use is swapped for another Ed25519
    key, filled with garbage, or emptied: the run destroys it (`evidence.key_corrupt`),
    skips to the next epoch, and every checkpoint it signs verifies from the root."""
    out = tmp_path / "audit.jsonl"
    audited(install, out, batch="{max_records: 4}")
    spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 3)])
    dispatch(install)
    ring = Keyring(install.layout)
    nxt = ring.epoch() + 1  # the key the next run rolls over to
    pem = install.state_root / "keys" / f"key-{keytree.path(nxt)[-1]}.pem"
    assert pem.exists()
    other = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    pem.write_bytes({"swapped": other, "garbage": b"\x00garbage\xff", "empty": b""}[damage])
    spool_directly(install, [*calls(3, 6), ("SessionEnd", payload("SessionEnd"))])
    dispatch(install)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    epochs = {r["epoch"] for r in rows if r["section"] == "checkpoint"}
    assert nxt not in epochs and max(epochs) > nxt  # skipped, and signing went on
    r = install.ways("sensors", "verify", str(out), "--key", root_vkey(install), "--json")
    assert r.returncode == 0, r.stdout
    log = (install.state_root / "events.log").read_text().splitlines()
    bad = [json.loads(x) for x in log if "evidence.key_corrupt" in x]
    assert [b["node"] for b in bad] == [keytree.path(nxt)[-1]]
    assert not pem.exists()


def test_keys_show_says_in_one_line_that_a_damaged_key_file_cannot_be_read(install):
    assert install.ways("keys", "show").returncode == 0
    spine = install.state_root / "keys" / "nodes" / "spine.cert"
    spine.write_text("not a note")
    r = install.ways("keys", "show")
    assert r.returncode == 3 and "Traceback" not in r.stderr
    assert "cannot be read" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    (install.state_root / "keys" / "root.vkey").write_bytes(b"\xff\xfe not a key")
    r = install.ways("keys", "show", "--json")
    assert r.returncode == 3 and "Traceback" not in r.stderr


def _memory(pid: int) -> bytes:
    """Every readable byte of a process's memory (a child of ours: ptrace rights)."""
    chunks = []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith("r"):
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(start)
                chunks.append(mem.read(end - start))
            except (OSError, OverflowError, ValueError):
                continue  # [vvar] and the like
    return b"".join(chunks)


def _forms(seed: bytes) -> list[bytes]:
    """What a key's seed is held as while it is read, made or written: the seed, the
    PKCS#8 DER around it and the PEM's base64 body (a str or bytes freed without being
    cleared keeps these until its memory is reused)."""
    import base64

    der = bytes.fromhex("302e020100300506032b657004220420") + seed
    return [seed, der, base64.b64encode(der)]


def test_a_retired_key_is_not_left_in_the_dispatchers_memory(install, tmp_path):
    """A running dispatcher that rolled over holds no copy of the retired key's seed
    anywhere in its memory (what a process with ptrace rights over it could read)."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    install.config("ways:\n  evidence:\n    epoch_seconds: 1\n")
    out = tmp_path / "audit.jsonl"
    audited(install, out, batch="{max_records: 1}")
    Keyring(install.layout).ensure()  # epoch 0: the dispatcher makes epoch 1's key
    seeds = {}

    def read_seeds() -> None:
        for epoch in (1, 2, 3, 4):
            path = install.state_root / "keys" / f"key-{keytree.path(epoch)[-1]}.pem"
            key = serialization.load_pem_private_key(path.read_bytes(), None)
            assert isinstance(key, Ed25519PrivateKey)
            seeds[epoch] = key.private_bytes_raw()

    ways = str(Path(sys.executable).parent / "ways")
    proc = subprocess.Popen(
        [ways, "sensors", "dispatch", "--idle", "60", "--session", SID], env=install.env,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip

    def epochs() -> list[int]:
        rows = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
        return [r["epoch"] for r in rows if r["section"] == "checkpoint"]

    try:
        spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 1)])
        end = time.monotonic() + 60
        while not epochs() and time.monotonic() < end:
            time.sleep(0.1)
        first = epochs()[0]
        read_seeds()  # made and written by the dispatcher, epoch 1's still in use
        time.sleep(1.5)  # the key is now older than epoch_seconds
        spool_directly(install, calls(1, 2))
        while max(epochs()) == first and time.monotonic() < end:
            time.sleep(0.1)
        assert max(epochs()) > first and first in seeds
        memory = _memory(proc.pid)
        assert seeds[max(epochs())] in memory  # the current key is there: the scan sees it
        left = [form for form in _forms(seeds[first]) if form in memory]
        assert not left  # the retired one is not, as its seed, its DER or its PEM's body
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_a_key_another_dispatcher_destroyed_is_not_kept_in_memory(install, tmp_path):
    """A second session's dispatcher (here: another process's rollover) destroys the key
    an idle dispatcher signed with: within a few seconds the idle one holds no copy of it
    either (it kept the key object until its next signature, for as long as it lived)."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    install.config("ways:\n  evidence:\n    checkpoint_seconds: 0\n")  # nothing left due
    out = tmp_path / "audit.jsonl"
    audited(install, out, batch="{max_records: 1}")
    Keyring(install.layout).ensure()
    ways = str(Path(sys.executable).parent / "ways")
    proc = subprocess.Popen(
        [ways, "sensors", "dispatch", "--idle", "60", "--session", SID], env=install.env,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 1)])
        end = time.monotonic() + 60
        while (out.read_text() if out.exists() else "").count('"checkpoint"') < 2:
            assert time.monotonic() < end, "not every record signed"
            time.sleep(0.1)  # session_start and the call, each signed as it went
        ring = Keyring(install.layout)
        epoch = ring.epoch()
        path = install.state_root / "keys" / f"key-{keytree.path(epoch)[-1]}.pem"
        key = serialization.load_pem_private_key(path.read_bytes(), None)
        assert isinstance(key, Ed25519PrivateKey)
        seed = key.private_bytes_raw()
        assert seed in _memory(proc.pid)  # held for its next signature: the scan sees it
        ring.rollover()  # another process: the key file is destroyed
        assert not path.exists()
        left: list[bytes] = []
        while time.monotonic() < end:
            time.sleep(0.5)
            left = [form for form in _forms(seed) if form in _memory(proc.pid)]
            if not left:
                break
        assert not left, "the destroyed key is still in the dispatcher's memory"
        assert proc.poll() is None  # it was idle all along, not gone
    finally:
        proc.kill()
        proc.wait(timeout=30)
