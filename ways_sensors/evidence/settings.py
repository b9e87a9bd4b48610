"""What config.yaml's evidence keys may hold, checked for `ways sensors lint`: each
`ways.witness` entry as the dispatcher reads it (witness.configured), and
`ways.evidence.epoch_seconds`. A value the dispatcher would refuse is an error here:
at run time it goes on without that witness, or with the default epoch, and says so
only in events.log.
"""

from __future__ import annotations

from typing import Any

from .. import roots
from ..config.layers import Problem, read_config
from ..config.lint import Lines
from .witness import configured


def problems(path: str | None = None) -> list[Problem]:
    """`ways.witness` entries the dispatcher would refuse (it would go on without that
    witness: docs/evidence.md) and an `epoch_seconds` it would not take."""
    path = path or roots.config_file()
    config, problem = read_config(path)
    if problem or not config:
        return []  # the loader reports a broken config.yaml itself
    lines = Lines()
    out = []
    node = config.get("ways")
    ways: dict[str, Any] = node if isinstance(node, dict) else {}
    if ways.get("witness") is not None:
        line, column = lines.at(path, ["ways", "witness"])
        for p in configured(config)[1]:
            msg = f"{p} (the dispatcher goes on without this witness)"
            out.append(Problem("error", path, line, msg, column=column))
    evidence = ways.get("evidence")
    value = evidence.get("epoch_seconds") if isinstance(evidence, dict) else None
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0
    ):
        line, column = lines.at(path, ["ways", "evidence", "epoch_seconds"])
        msg = f"ways.evidence.epoch_seconds: a positive number of seconds, not {value!r}"
        out.append(Problem("error", path, line, msg + " (3600 is used)", column=column))
    return out
