"""The fleet room: what an administrator deploys to many machines.

* places.py: where each agent reads its system-wide, administrator-owned hook wiring.
* originals.py: the bytes of a system file as it was before ways wired it, so
  `--remove` puts it back byte for byte.
* managed.py: `ways reconcile --managed`, writing and removing that wiring.
* policy.py: what `ways status` reads to say when an agent's policy blocks recording.
* locks.py and config.py: the managed sensor layer's locked rules and config keys.
* identity.py and inventory.py: who made each record, and what install made a session.
"""
