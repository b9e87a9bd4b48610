"""What the evidence tests share: a chained audit rule, the recorded session's tool
calls, one real dispatcher run to its exit, the root key as `ways keys show` prints it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cryptography.hazmat.primitives import serialization

from ..conftest import payload
from ..helpers import SID

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
