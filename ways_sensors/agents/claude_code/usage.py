"""Token usage and model of a reply, summed over its API calls in the transcript.

Claude Code writes one API response as several `assistant` lines (one per content
block), all with the same `message.id`, `model` and `usage`; `stop_reason` is set on
the last one. So a response is counted once per `message.id` (the usage of its latest
line wins), and a reply is over when a response ends on something other than
`tool_use`. Synthetic lines (`model: "<synthetic>"`, the rendered API errors) are no
API call and are skipped.

The running sums live in a plain JSON-able dict (the tracker persists it across
dispatcher restarts):

    {"sum": [input, output, cache_read, cache_creation],   # calls before `cur`
     "cur": <message id of the newest call>, "last": [4 ints],  # that call's usage
     "ids": [recent message ids], "n": <calls>, "model": <newest call's model>,
     "final": <the newest call ended the reply>}

What a record carries (`data.usage`):

    {"input_tokens", "output_tokens", "cache_read_input_tokens",
     "cache_creation_input_tokens", "api_calls"}

and `data.model`. A reply whose calls are not all on disk when its record is built
carries `usage: null` and `usage_missing` saying why (MISSING_*): records are never
held back for it.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
SYNTHETIC = "<synthetic>"
MISSING_PENDING = "pending"  # the reply's last API call was not on disk yet
MISSING_UNREADABLE = "unreadable"  # no transcript to read (payload-only), or too large
# the client wrote no file for the agent at all: Claude Code keeps none for its internal
# agents (compaction's among them), so their model and tokens are nowhere on disk
MISSING_ABSENT = "absent"
_RECENT_IDS = 8
FRESH = 5.0  # seconds: a session file changed this recently is still being written


def new() -> dict[str, Any]:
    return {
        "sum": [0, 0, 0, 0],
        "cur": None,
        "last": [0, 0, 0, 0],
        "ids": [],
        "n": 0,
        "model": None,
        "final": False,
    }


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def add(state: dict[str, Any], message: Any) -> None:
    """Account one `assistant` line's message (`obj["message"]`)."""
    if not isinstance(message, dict) or message.get("model") == SYNTHETIC:
        return
    stop = message.get("stop_reason")
    state["final"] = stop is not None and stop != "tool_use"
    raw = message.get("usage")
    if not isinstance(raw, dict):
        return  # says whether the reply is over, but holds no call to count
    values = [_count(raw.get(f)) for f in FIELDS]
    mid = message.get("id") if isinstance(message.get("id"), str) else None
    if mid is not None and mid == state["cur"]:
        state["last"] = values  # another block of the same response: same call
    elif mid is not None and mid in state["ids"]:
        return  # an older response seen again: counted once
    else:
        state["sum"] = [a + b for a, b in zip(state["sum"], state["last"], strict=True)]
        state["cur"], state["last"] = mid, values
        state["n"] += 1
        if mid is not None:
            state["ids"] = [*state["ids"][-(_RECENT_IDS - 1) :], mid]
    if isinstance(message.get("model"), str):
        state["model"] = message["model"]


def totals(state: dict[str, Any]) -> dict[str, int]:
    out = {f: a + b for f, a, b in zip(FIELDS, state["sum"], state["last"], strict=True)}
    out["api_calls"] = state["n"]
    return out


def fields(state: dict[str, Any] | None, missing: str = MISSING_PENDING) -> dict[str, Any]:
    """`model`, `usage` (and `usage_missing` when there is none) for a record's data:
    the sums when the reply's last call is on disk, else none and why."""
    if state is None or not state["n"] or not state["final"]:
        model = state["model"] if state else None
        return {"model": model, "usage": None, "usage_missing": missing}
    return {"model": state["model"], "usage": totals(state)}


def recovered_fields(state: dict[str, Any] | None) -> dict[str, Any]:
    """An interrupted reply's calls: whatever reached the transcript is all there is."""
    if state is None or not state["n"]:
        return {"model": None, "usage": None, "usage_missing": MISSING_PENDING}
    return {"model": state["model"], "usage": totals(state)}


def size(path: Any) -> int:
    try:
        return os.path.getsize(path) if isinstance(path, str) else -1
    except OSError:
        return -1


def fresh(path: Any) -> bool:
    """Whether a session file was written within the last FRESH seconds: a call missing
    from it may still come."""
    try:
        return isinstance(path, str) and time.time() - os.stat(path).st_mtime < FRESH
    except OSError:
        return False
