"""What the evidence tests share: a chained audit rule, the recorded session's tool
calls, one real dispatcher run to its exit, one real hook run, the root key as `ways
keys show` prints it, the test witness's trust in this machine's keys."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from cryptography.hazmat.primitives import serialization

from ways_sensors.state import spool

from ..conftest import payload
from ..helpers import SID
from . import independent as ind

PY = sys.executable


def dispatch(install, idle: float = 0.5) -> None:
    """One dispatcher run, to its exit (idle after `idle` seconds without events)."""
    argv = [str(Path(PY).parent / "ways"), "sensors", "dispatch", "--idle", str(idle)]
    subprocess.run(
        [*argv, "--session", SID], env=install.env, stdin=subprocess.DEVNULL,
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip


def calls(start: int, stop: int) -> list[tuple[str, dict]]:
    base = payload("PreToolUse")
    return [("PreToolUse", {**base, "tool_use_id": f"toolu_{i:04d}"}) for i in range(start, stop)]


def audited(install, out: Path, **extra: str) -> None:
    more = "".join(f"    {k}: {v}\n" for k, v in extra.items())
    install.sensor(
        "audit",
        f"enabled: true\nrules:\n  all:\n    chain: true\n    delivery: at_least_once\n"
        f"    dispatch: {{file: {{path: '{out}'}}}}\n{more}",
    )


EVERY_BATCH = "  evidence:\n    checkpoint_seconds: 0\n    witness_seconds: 0\n"


def every_batch(install, more: str = "") -> None:
    """A checkpoint per batch and a witness asked for each (evidence/cadence.py at 0):
    tests of what a checkpoint names. `more`: other lines under `ways:`."""
    install.config("ways:\n" + EVERY_BATCH + more)


def with_ends(records: list[dict], cps: list[dict]) -> list[bytes]:
    """A file's tree leaves: each record's chain hash, and an end leaf where a checkpoint
    record says the tree ended (`"end": true`: SHA-256 of "ways.sensors/end\n<index>\n",
    docs/evidence.md)."""
    import hashlib

    ends = {ind_size(c) - 1 for c in cps if c.get("end")}
    out: list[bytes] = []
    for r in [*records, None]:
        while len(out) in ends:
            out.append(hashlib.sha256(b"ways.sensors/end\n%d\n" % len(out)).digest())
        if r is not None:
            out.append(bytes.fromhex(r["chain"]["hash"]))
    return out


def ind_size(cp: dict) -> int:
    return int(cp["checkpoint"].split("\n")[1])


def root_vkey(install) -> str:
    r = install.ways("keys", "show", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["verifier_key"]


def private_keys_under(root):
    """Every file anywhere under the state root that loads as a private key."""
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(folder, name), "rb") as f:
                data = f.read()
            try:
                key = serialization.load_pem_private_key(data, None)
            except (ValueError, TypeError):
                try:
                    key = serialization.load_der_private_key(data, None)
                except (ValueError, TypeError):
                    continue
            found.append((os.path.join(folder, name), key))
    return found


def trusting(install):
    """The witness's trust policy: the epoch keys certified from this machine's root
    (read from the state root at each request: the deployment gives the witness the
    root key and the certificates)."""

    def trust(origin: str):
        keys = install.state_root / "keys"
        try:
            root = (keys / "root.vkey").read_text()
            certs = [c.read_text() for c in (keys / "nodes").glob("*.cert")]
        except OSError:
            return None
        if not origin.startswith(root.split("+")[0] + "/"):
            return None
        return [(origin, k) for k in ind.key_tree(root, certs).values()]

    return trust


def hook(install, p: dict) -> None:
    r = install.hook(p)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def gone(install, sid: str = SID) -> bool:
    return not (install.sessions() / sid).exists()


def session(install, sid: str) -> None:
    """A session of five records and its end, one dispatcher run to its exit."""
    spooled(install, sid)
    argv = [str(Path(PY).parent / "ways"), "sensors", "dispatch", "--idle", "0.5"]
    subprocess.run(
        [*argv, "--session", sid],
        env=install.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=True,
    )


def spooled(install, sid: str) -> None:
    """`session`'s events in the session's spool, no dispatcher started."""
    events = [("SessionStart", payload("SessionStart"))]
    events += [
        ("PreToolUse", {**payload("PreToolUse"), "tool_use_id": f"toolu_{i}"}) for i in range(3)
    ]
    events += [("SessionEnd", payload("SessionEnd"))]
    for event, p in events:
        body = json.dumps({**p, "session_id": sid}).encode()
        spool.append(sid, event, time.time_ns(), str(install.project), body, layout=install.layout)
