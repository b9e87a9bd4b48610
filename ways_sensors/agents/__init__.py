"""The agents registry: every coding agent whose hooks ways records.

An agent has two halves:

* its face (protocols.Face), an AgentFace: which payload fields carry the event, the
  session and the transcript, which sections each event can yield, which environment
  variable names the project, which events start and end a session. The hook reads
  it on every tool call, before it knows whether any rule wants the event, so the
  faces are written in index.py (AGENTS), beside the compiled rule index the hook
  reads next: one import for both, since every module the hook imports adds to
  every tool call (bench/RESULTS.md, Hook latency).
* its adapter package, `ways_sensors/agents/<name>/` (protocols.Adapter, in its
  `adapter.py`), for the dispatcher, the blocking path and the commands: payloads (and
  the agent's session file) to Drafts, the session-file reader and replayer behind
  `ways sensors test`, example payloads for `ways sensors fire`, and what
  `ways reconcile` wires where. Nothing on the hook's path imports it.

This module is the registry's door for everyone else: names(), face(), adapter(), and
the Protocols (loaded lazily from protocols.py, since `typing` imports `re`).

Everything agent-neutral stays outside: the record envelope and Draft (records.py),
the spool (spool.py, whose entries name the agent that wrote them), the reconcile
guarantees (commands/reconcile.py), the hook's raw-byte field scan (hook.py).

Adding an agent: a new package `agents/<name>/` with its `adapter.py` (and its own
modules behind it; what every adapter shares is in agents/kit/: the adapter base, the
bounded session-file reader, the builder and replay scaffolding), its tests under
tests/agents/, and its face, one entry in index.AGENTS (an agent registered at run
time, like the tests' toy, is `register(face)`), and, when its models come from one
provider, a line in providers.py. `ways hook sensors --agent <name>` then serves it and
`ways reconcile --agent <name>` wires it; nothing else changes.
"""

import sys

from ..index import AGENTS, DEFAULT, AgentFace

TYPE_CHECKING = False  # type checkers read it as True; `typing` imports `re`
if TYPE_CHECKING:
    from .protocols import Adapter as Adapter
    from .protocols import Face as Face

__all__ = ["AGENTS", "DEFAULT", "AgentFace", "adapter", "face", "names", "register"]

_PROTOCOLS = ("Face", "Adapter", "SessionBuilder", "Replay")


def register(face: AgentFace) -> None:
    """Add an agent at run time (the tests' toy does); built-in agents are in AGENTS."""
    AGENTS[face.NAME] = face


def names() -> "tuple[str, ...]":
    """Every registered agent name, the default first."""
    return (DEFAULT, *sorted(n for n in AGENTS if n != DEFAULT))


def face(name: str) -> "Face | None":
    """The named agent's face, or None for a name that is not registered."""
    return AGENTS.get(name)


def adapter(name: str) -> "Adapter":
    """The named agent's builder half; KeyError for a name that is not registered."""
    path = AGENTS[name].PACKAGE + ".adapter"
    mod = sys.modules.get(path)  # the dispatcher asks for every entry it builds
    if mod is None:
        __import__(path)  # not importlib: it costs an import of its own
        mod = sys.modules[path]
    return mod  # a module: the type checker holds each adapter.py to Adapter


def __getattr__(name: str) -> object:
    if name in _PROTOCOLS:
        from . import protocols

        return getattr(protocols, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
