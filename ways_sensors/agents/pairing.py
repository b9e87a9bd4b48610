"""Pairing tool calls with their results when an agent gives them no id (Gemini CLI, Copilot CLI).

Gemini CLI's BeforeTool/AfterTool and Copilot CLI's PreToolUse/PostToolUse carry no
tool-call id. Calls and results are paired by order within a turn: a call gets a
synthetic id, `<prefix>-<turn>-<n>` (the turn is named by the time its prompt was
submitted, so ids of one session never repeat across its processes; n counts the calls
of the turn from 1), and a result takes the id of the oldest unanswered call of the
same tool with the same input, else of the same tool (an agent that rewrote the input
in between), else a fresh id (a result whose call was not recorded). Parallel calls
that finish out of order still pair by their input.

The queue is part of the builder's JSON state (it survives a dispatcher restart) and
is bounded: at most MAX_OPEN calls wait for a result; the oldest is forgotten first.
"""

from __future__ import annotations

from .. import jsoncore
from ..plain import Plain
from ..sha import sha256_hex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_OPEN = 64


def input_key(tool_name: Any, tool_input: Any) -> str:
    """A short digest of a call's tool and input, to pair it with its result."""
    try:
        text = jsoncore.dumps([tool_name, tool_input], sort_keys=True, default=str)
    except (ValueError, RecursionError):
        text = repr(tool_name)
    return sha256_hex(text.encode("utf-8", "surrogatepass"))[:16]


class CallQueue(Plain):
    """The calls of the current turn still waiting for their result (a plain.py class:
    this module is on a blocking rule's path for Gemini CLI, Cursor and Copilot CLI)."""

    __slots__ = FIELDS = ("prefix", "turn", "n", "open")

    def __init__(
        self, prefix: str, turn: str = "0", n: int = 0, open: list[list[str]] | None = None
    ) -> None:
        self.prefix, self.turn, self.n = prefix, turn, n
        self.open: list[list[str]] = open if open is not None else []  # [id, tool, input key]

    def new_turn(self, turn: Any) -> None:
        """A new prompt: ids restart at 1 under its name (a string the payload gave, or
        "0"); unanswered calls stay open."""
        name = turn if isinstance(turn, str) else ""
        self.turn = "".join(c for c in name if c.isalnum())[:24] or "0"
        self.n = 0

    def call(self, tool_name: Any, tool_input: Any) -> str:
        self.n += 1
        cid = f"{self.prefix}-{self.turn}-{self.n}"
        self.open = [
            *self.open[-(MAX_OPEN - 1) :],
            [cid, str(tool_name), input_key(tool_name, tool_input)],
        ]
        return cid

    def result(self, tool_name: Any, tool_input: Any) -> str:
        key = input_key(tool_name, tool_input)
        name = str(tool_name)
        for at, wanted in ((2, key), (1, name)):  # the same input first, else the tool
            for entry in self.open:
                if entry[at] == wanted:
                    self.open.remove(entry)
                    return entry[0]
        self.n += 1
        return f"{self.prefix}-{self.turn}-{self.n}"

    def to_dict(self) -> dict[str, Any]:
        return {"turn": self.turn, "n": self.n, "open": self.open}

    @classmethod
    def from_dict(cls, prefix: str, d: Any) -> CallQueue:
        if not isinstance(d, dict):
            return cls(prefix)
        opened = [o for o in d.get("open", []) if isinstance(o, list) and len(o) == 3]
        return cls(prefix, str(d.get("turn", "0")), int(d.get("n", 0)), opened[-MAX_OPEN:])


MAX_KEYS = 256


class Twins(Plain):
    """Events of two kinds that report the same thing (Cursor's generic `preToolUse` and
    its `beforeShellExecution`, Copilot CLI's failing `PostToolUse` and its
    `PostToolUseFailure`): each occurrence is recorded once, whichever kind comes first.

    Per key (what the event is about) it counts the events of each kind: an event is
    new when its kind has now been seen more often than the other kind."""

    __slots__ = FIELDS = ("counts",)

    def __init__(self, counts: dict[str, list[int]] | None = None) -> None:
        self.counts: dict[str, list[int]] = counts if counts is not None else {}

    def first(self, key: str, kind: int) -> bool:
        """Count one event of `kind` (0 or 1) about `key`; True when it is the first
        report of this occurrence."""
        seen = self.counts.pop(key, [0, 0])
        seen[kind] += 1
        self.counts[key] = seen  # most recent last: the oldest keys go first
        if len(self.counts) > MAX_KEYS:
            del self.counts[next(iter(self.counts))]
        return seen[kind] > seen[1 - kind]

    def to_dict(self) -> dict[str, list[int]]:
        return self.counts

    @classmethod
    def from_dict(cls, d: Any) -> Twins:
        if not isinstance(d, dict):
            return cls()
        return cls(
            {
                str(k): [int(v[0]), int(v[1])]
                for k, v in d.items()
                if isinstance(v, list) and len(v) == 2
            }
        )
