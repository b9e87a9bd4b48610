"""The agents registry: every coding agent whose hooks ways records, by name.

An agent is one adapter package, `ways_sensors/agents/<name>/`, in two halves:

* the face, the package's `__init__.py` itself (protocols.Face): which payload fields
  carry the event, the session and the transcript, which sections each event can
  yield, which environment variable names the project, which events start and end a
  session. The hook imports it on every tool call, so it imports nothing at all
  (constants and one function; tests/test_hook.py checks the fast path's modules).
  It is the package's `__init__` rather than a module of its own because importing any
  module of the package imports `__init__` first: one import instead of two.
* `adapter.py`, the builder half (protocols.Adapter), for the dispatcher, the blocking
  path and the commands: payloads (and the agent's session file) to Drafts, the
  session-file reader and replayer behind `ways sensors test`, example payloads for
  `ways sensors fire`, and what `ways reconcile` wires where.

Everything agent-neutral stays outside: the record envelope and Draft (records.py),
the spool (spool.py, whose entries name the agent that wrote them), the reconcile
guarantees (commands/reconcile.py), the hook's raw-byte field scan (hook.py).

Adding an agent: a new package `agents/<name>/` whose `__init__.py` is the face, with
`adapter.py` (and its own modules behind it), its tests under tests/agents/, and one
line in ADAPTERS.
`ways hook sensors --agent <name>` then serves it and `ways reconcile --agent <name>`
wires it; nothing else changes.

This module is on the hook's fast path: it imports `sys` only (the Protocols are
loaded lazily, on first use of `agents.Face` and friends, from protocols.py, since
`typing` pulls in `re`).
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .protocols import Adapter, Face

DEFAULT = "claude-code"

# agent name -> adapter package: the package is its face, `<package>.adapter` the rest
ADAPTERS = {
    "claude-code": "ways_sensors.agents.claude_code",
    "codex": "ways_sensors.agents.codex",
    "gemini": "ways_sensors.agents.gemini",
    "cursor": "ways_sensors.agents.cursor",
    "copilot": "ways_sensors.agents.copilot",
}

_PROTOCOLS = ("Face", "Adapter", "SessionBuilder", "Replay")


def names() -> tuple[str, ...]:
    """Every registered agent name, the default first."""
    return (DEFAULT, *sorted(n for n in ADAPTERS if n != DEFAULT))


def _load(path: str) -> object:
    __import__(path)  # not importlib: the hook would pay for its import
    return sys.modules[path]


def face(name: str) -> "Face | None":
    """The named agent's face (its package), or None for a name that is not registered."""
    package = ADAPTERS.get(name)
    if package is None:
        return None
    return _load(package)  # type: ignore[return-value]


def adapter(name: str) -> "Adapter":
    """The named agent's builder half; KeyError for a name that is not registered."""
    return _load(ADAPTERS[name] + ".adapter")  # type: ignore[return-value]


def __getattr__(name: str) -> object:
    if name in _PROTOCOLS:
        from . import protocols

        return getattr(protocols, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
