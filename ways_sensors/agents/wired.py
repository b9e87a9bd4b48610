"""Which hook commands in an agent's settings are ways' own: `ways reconcile` replaces
them, `reconcile --managed` and `ways status` (fleet/) find them, in any of the forms
reconcile has written (a `ways` on PATH, `<python> -S .../_launch.py`, with or without
`--agent` and `--event`)."""

from __future__ import annotations

from ..index import DEFAULT


def is_our_command(command: str, agent: str = DEFAULT) -> bool:
    """Whether `command` is a hook command of ours for `agent`, in any of its forms."""
    cmd = command.strip()
    head, sep, event = cmd.rpartition(" --event ")
    if sep and event and " " not in event:
        cmd = head.rstrip()
    tails = ["hook sensors --agent " + agent]
    if agent == DEFAULT:
        tails.append("hook sensors")
    if not any(cmd.endswith(t) for t in tails):
        return False
    return "_launch.py" in cmd or "ways" in cmd
