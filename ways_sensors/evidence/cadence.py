"""How often a tree is checkpointed and a witness asked: bounded, and always at the end.

A quiet session delivers each record alone, and a checkpoint per batch made checkpoints
about half of a quiet session's lines and asked a witness once per record. So a batch
gets a checkpoint only when the tree's last one is `checkpoint_seconds` old (or older),
a tree with leaves not yet signed gets one of its own once that time has passed (the
dispatcher pokes its worker: crew.py), and a witness is asked at most every
`witness_seconds` per tree. A tree is always signed, and its witnesses asked, when it
closes: the end leaf a dispatcher adds before it leaves (sealer.py). The first batch a
dispatcher delivers is signed at once.

config.yaml (user only; numbers of seconds, 0 for every batch):

    ways:
      evidence:
        checkpoint_seconds: 5    # the longest a delivered record waits for its signature
        witness_seconds: 60
        machine_log_seconds: 60  # the machine log's checkpoints (machinelog.py)
        checkpoints: true        # false: chained rules keep their hash chain alone (no
                                 # tree, no key, no checkpoint, no machine-log entry)

The unsigned window (docs/evidence.md, the threat model) is therefore at most
`checkpoint_seconds` plus the dispatcher's one-second poke.
"""

from __future__ import annotations

from dataclasses import dataclass

CHECKPOINT_SECONDS = 5.0
WITNESS_SECONDS = 60.0
MACHINE_LOG_SECONDS = 60.0
_read: dict[str, Cadence] = {}


@dataclass(frozen=True)
class Cadence:
    checkpoint: float = CHECKPOINT_SECONDS
    witness: float = WITNESS_SECONDS
    machine_log: float = MACHINE_LOG_SECONDS
    checkpoints: bool = True  # false: no chained rule is signed (worker.py's _sealer)


def configured() -> Cadence:
    """config.yaml's `ways.evidence` cadence, read once per process and config file (a
    process that runs several state roots, as the tests and `ways sensors fire` do, reads
    each root's own)."""
    from .. import roots

    path = roots.config_file()
    if path not in _read:
        _read[path] = Cadence(
            _seconds("checkpoint_seconds", CHECKPOINT_SECONDS),
            _seconds("witness_seconds", WITNESS_SECONDS),
            _seconds("machine_log_seconds", MACHINE_LOG_SECONDS),
            setting("checkpoints") is not False,
        )
    return _read[path]


def _seconds(name: str, default: float) -> float:
    value = setting(name)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 86400:
        return float(value)
    return default


def setting(name: str) -> object:
    """config.yaml's `ways.evidence.<name>`, or None (absent, or a config that fails to
    read: lint names it); the key epoch's too (pem.py). userconfig, not
    layers.read_config: a dispatcher most often finds no config.yaml, and then never
    loads the YAML reader."""
    from ..config import userconfig

    try:
        config = userconfig.data()
    except Exception:
        return None
    node = config.get("ways") if isinstance(config, dict) else None
    node = node.get("evidence") if isinstance(node, dict) else None
    return node.get(name) if isinstance(node, dict) else None
