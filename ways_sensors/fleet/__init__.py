"""The fleet room: what an administrator deploys to many machines.

* places.py: where each agent reads its system-wide, administrator-owned hook wiring.
* originals.py: the bytes of a system file as it was before ways wired it, so
  `--remove` puts it back byte for byte.
* managed.py: `ways reconcile --managed`, writing and removing that wiring.
* policy.py: what `ways status` reads to say when an agent's policy blocks recording.
"""
