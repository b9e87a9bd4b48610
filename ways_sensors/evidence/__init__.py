"""Evidence that survives the machine: RFC 6962 trees over each rule's chained records,
C2SP signed checkpoints with forward-secure epoch keys, tlog-witness cosignatures, and
the offline check of all of it (docs/evidence.md has the threat model).

    merkle.py   RFC 6962 hashing, inclusion and consistency proofs
    note.py     C2SP signed notes, checkpoints, verifier keys, cosignature/v1
    keys.py     the epoch keys in `<state>/keys/` and their certificate chain
    witness.py  the tlog-witness add-checkpoint client and the configured witnesses
    sealer.py   one rule's tree in one session: the checkpoint that closes each batch
    carry.py    a tree kept in the ledger, so a resumed session goes on signing
    tiles.py    an RFC 6962 tree as C2SP tlog-tiles: static files any server can serve
    machinelog.py   the machine log: every session tree's checkpoints in one log per
                install, one origin and one key, for a stock witness
    machinecheck.py `verify --machine-log`: a session the machine log holds must be in
                the files

Signing imports `cryptography`; merkle.py and carry.py (which session end and retention
use) need only the standard library. Nothing on the hook's path imports this package.
"""
