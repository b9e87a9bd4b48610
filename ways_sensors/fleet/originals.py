"""A system file's bytes as they were before `ways reconcile --managed` first changed it.

`--remove` must give the administrator back the file they had, byte for byte, and a
JSON rewrite cannot (key order, spacing and escapes are the writer's). So the first
wiring of a file keeps what was there, under the system root:

    <root>/var/lib/agent-ways/managed/              0700, root's
    <root>/var/lib/agent-ways/managed/<key>.json    0600: {"path", "existed", "mode", "made_dirs"}
    <root>/var/lib/agent-ways/managed/<key>.orig    0600: the file's bytes (when it existed)
        key = first 32 hex digits of sha256(the file's path under the root)

Written before the file is changed (a kill in between leaves a record of an unchanged
file, which the next run keeps), read and deleted by `--remove`. A record is kept
only while our wiring is in the file; later runs never overwrite it, so it always
holds the state before ways.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from ..sha import sha256_hex
from ..state.files import replace_atomically

FOLDER = "var/lib/agent-ways/managed"


@dataclass(frozen=True)
class Original:
    path: str  # under the root
    existed: bool
    mode: int  # the file's permission bits; 0 when it did not exist
    made_dirs: tuple[str, ...]  # folders wiring created, deepest first, under the root
    raw: bytes  # b"" when it did not exist


def _base(root: str, rel: str) -> str:
    return os.path.join(root, FOLDER, sha256_hex(rel.encode("utf-8"))[:32])


def load(root: str, rel: str) -> Original | None:
    base = _base(root, rel)
    try:
        with open(base + ".json", encoding="utf-8") as f:
            meta = json.load(f)
        raw = b""
        if meta["existed"]:
            with open(base + ".orig", "rb") as f:
                raw = f.read()
    except (OSError, ValueError, KeyError):
        return None  # none kept (or unreadable): --remove rewrites without our wiring
    return Original(rel, bool(meta["existed"]), int(meta["mode"]), tuple(meta["made_dirs"]), raw)


def save(root: str, original: Original) -> None:
    folder = os.path.join(root, FOLDER)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    base = _base(root, original.path)
    if original.existed:
        replace_atomically(base + ".orig", original.raw, fsync=True)
    meta = {
        "path": original.path,
        "existed": original.existed,
        "mode": original.mode,
        "made_dirs": list(original.made_dirs),
    }
    replace_atomically(base + ".json", json.dumps(meta) + "\n", fsync=True)


def forget(root: str, rel: str) -> None:
    """Drop the record; the folders go with the last one, up to the root (a system's
    /var/lib is never empty; a staged tree's var/ was made for these records alone)."""
    base = _base(root, rel)
    for suffix in (".orig", ".json"):
        try:
            os.unlink(base + suffix)
        except FileNotFoundError:
            pass
    folder = FOLDER
    while folder:
        try:
            os.rmdir(os.path.join(root, folder))
        except OSError:
            return  # records of other files are left in it
        folder = os.path.dirname(folder)
