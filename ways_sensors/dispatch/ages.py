"""How long the state root keeps what it holds, as config.yaml's `ways.retention` says:
the ages retention.py sweeps by, parsed once for every reader (the sweep, `ways status`,
`ways settings`).

    ways.retention.abandoned_after   a session folder nothing wrote in for this long is
                                     removed (default 7d, at least 1h: a live session
                                     can idle)
    ways.retention.store_kept        the session store's sessions whose last record is
                                     older are removed (unset: kept for good)
"""

from __future__ import annotations

import re
from typing import Any

from ..config import userconfig
from ..state import events

SETTING = ("ways", "retention", "abandoned_after")
STORE_KEPT = ("ways", "retention", "store_kept")
DEFAULT_AGE = 7 * 86400.0
MIN_AGE = 3600.0
_AGE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)?\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(value: Any) -> float:
    """Seconds from `12h`, `7d`, `2w`, `90m`, `3600s` or a number of seconds; at least
    MIN_AGE. ValueError otherwise."""
    if isinstance(value, bool) or value is None:
        raise ValueError("abandoned_after takes a duration such as 12h, 7d or 2w")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        m = _AGE_RE.match(str(value))
        if not m:
            raise ValueError(f"{value!r} is not a duration; write e.g. 12h, 7d or 2w")
        seconds = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    if seconds < MIN_AGE:
        raise ValueError("abandoned_after must be at least 1h (a live session can idle)")
    return seconds


def abandoned_after(config: dict[str, Any] | None = None) -> float:
    """The configured age in seconds (config.yaml's, else the default); a bad value is
    logged and the default used."""
    node: Any = userconfig.data() if config is None else config
    for key in SETTING:
        node = node.get(key) if isinstance(node, dict) else None
    if node is None:
        return DEFAULT_AGE
    try:
        return parse_age(node)
    except ValueError:
        events.log("retention.bad_setting", key=".".join(SETTING))
        return DEFAULT_AGE


# --- the sweep ---------------------------------------------------------------------------
