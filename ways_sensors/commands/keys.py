"""`ways keys show [--json]` and `ways keys chain`: the machine's root of trust and the
certificates that prove every later signing key from it (evidence/keytree.py).

`show` prints the root public key (the Ed25519 key that signed the key tree's spine,
base64) and its C2SP verifier-key form, the one line to pin elsewhere (a consumer's config, another
machine, a ticket) and to give `ways sensors verify --key`. The root key is made here
when the state root has none yet, so it can be pinned before the first session.

It also prints the machine log's verifier key (evidence/machinelog.py: one key, one
origin per install), the line a stock witness is configured with, and the key
`ways sensors verify --machine-log DIR --machine-key KEY` checks its checkpoint with.

JSON (stable): {"root_public_key": base64, "verifier_key": vkey, "name": key name,
  "epoch": the current epoch, "certificates": how many prove its key (its path),
  "machine_log": {"origin", "verifier_key", "prefix": the folder of its tiles}}

`chain` prints the key certificates as stored: signed notes each followed by a blank
line, the form `ways sensors verify --checkpoints` reads. Consumers receive them in-band
too (each tree's first checkpoint carries its epoch key's path).
"""

from __future__ import annotations

import argparse
import json

from ..errors import InvalidError
from ..evidence import machinelog, note
from ..evidence.keys import KeyError_, Keyring
from ..evidence.note import NoteError


def show(args: argparse.Namespace) -> int:
    ring = Keyring()
    try:
        root = ring.ensure()
        epoch = ring.epoch()
        certs = ring.path_certificates(epoch) if epoch >= 0 else []
        log = {
            "origin": machinelog.origin(ring.layout),
            "verifier_key": machinelog.vkey(ring.layout),
            "prefix": machinelog.prefix(ring.layout),
        }
    except (NoteError, KeyError_, ValueError) as exc:  # a damaged file: one line, never a crash
        raise InvalidError(f"the keys in the state root cannot be read: {exc}") from None
    if args.json:
        out = {
            "root_public_key": note.b64(root.public),
            "verifier_key": root.vkey,
            "name": root.name,
            "epoch": epoch,
            "certificates": len(certs),
            "machine_log": log,
        }
        print(json.dumps(out, indent=2))
        return 0
    print(f"root public key (Ed25519): {note.b64(root.public)}")
    print(f"verifier key: {root.vkey}")
    print(f"current epoch: {epoch} (proven by {len(certs)} certificates)")
    print("pin the verifier key off this machine; check a file with:")
    print(f"  ways sensors verify FILE --key '{root.vkey}'")
    print(f"machine log: {log['origin']}, its tiles in {log['prefix']}")
    print(f"  its verifier key (give it to a witness): {log['verifier_key']}")
    return 0


def chain(args: argparse.Namespace) -> int:
    print(Keyring().chain_text(), end="")
    return 0
