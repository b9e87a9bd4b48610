"""What an agent adapter provides: the Protocols its two halves satisfy.

A module satisfies a Protocol when its module-level names match the members (the type
checker accepts modules as protocol implementations; functions stand in for methods).
`Face` is the hook's half (an agents.AgentFace, the agent's entry in the registry),
`Adapter` the rest (`agents/<name>/adapter.py`); tests/agents/ checks every registered
agent against both at run time too. Not on the hook's path: `typing` imports `re`.

A face's optional parts (Gemini CLI's SIZE_EVENTS, Copilot CLI's ALT_SESSION_FIELD,
Claude Code's ALSO) are AgentFace arguments with defaults. Optional members of an
adapter, read with getattr where they matter (an adapter without them keeps the
default):

    adapter.config_home(project)   the agent's configuration folder, which
                             `ways reconcile --agent all` looks for; default the folder
                             of settings_path
    adapter.OWN_FILE         the file wired is ways' own: `--remove` deletes it once empty
    adapter.NOTE             a line `ways reconcile` prints after wiring (Codex: trust it)
    adapter.is_session_file(path, first_line)   whether `ways sensors test --transcript`
                             was given this agent's session file
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

from ..records import Draft

# a hook command line -> whether ways wired it for this agent (commands/reconcile.py
# owns the command's form; the adapter knows where a command sits in its settings)
IsOurs = Callable[[str], bool]


@runtime_checkable
class Face(Protocol):
    """The agent as the hook sees it: raw payload bytes, before any JSON parsing."""

    # read-only members (properties): a module's constants satisfy them covariantly
    @property
    def NAME(self) -> str: ...
    @property
    def EVENT_FIELD(self) -> bytes:
        """Payload key of the event name."""
        ...

    @property
    def SESSION_FIELD(self) -> bytes:
        """Payload key of the session id."""
        ...

    @property
    def TRANSCRIPT_FIELD(self) -> bytes | None:
        """Payload key of the session file's path, if the agent has one."""
        ...

    @property
    def PROJECT_ENV(self) -> str:
        """Environment variable naming the project (else the working directory)."""
        ...

    @property
    def START_EVENT(self) -> str | None:
        """The event that (re)starts a session."""
        ...

    @property
    def END_EVENT(self) -> str | None:
        """The event that ends one: the dispatcher drains, then exits."""
        ...

    @property
    def EVENT_SECTIONS(self) -> Mapping[str, tuple[str, ...]]:
        """Event -> the sections it can yield."""
        ...

    @property
    def ALT_SESSION_FIELD(self) -> bytes | None:
        """A second payload key of the session id, read when the first is absent."""
        ...

    @property
    def SIZE_EVENTS(self) -> tuple[str, ...]:
        """Events, beside the start event, at which the hook notes the session file's
        size in the spool entry."""
        ...

    @property
    def VERBATIM(self) -> Mapping[str, Mapping[str, bytes]]:
        """Event -> {record path: the top-level payload key its tool records copy it
        from as is}: what the hook decides a blocking rule's `where` on (prefilter.py)."""
        ...

    def sections_for(self, event: str, field: Callable[[bytes], str | None]) -> tuple[str, ...]:
        """The sections one event can yield; `field(key)` reads a top-level string value
        from the raw payload (for events whose sections depend on the payload)."""
        ...


@runtime_checkable
class SessionBuilder(Protocol):
    """One session's record builder; its state survives a dispatcher restart."""

    def build(
        self, event: str, payload: dict[str, Any], ts_ns: int, transcript_size: int = -1
    ) -> list[Draft]:
        """Drafts for one hook event, in order; [] for an event it does not know."""
        ...

    def state(self) -> str:
        """What this builder must remember across restarts, as JSON text."""
        ...


@runtime_checkable
class HoldsFrames(Protocol):
    """A builder that holds some entries back (Codex: a result until the rollout says
    how it ended) and keeps, at rest, only where their spool frames are: the
    dispatcher tells it the frame it is building (`at`), keeps the spool segments it
    `held`s, and hands a new one the frames back (`restore`)."""

    at: tuple[str, int] | None

    def held(self) -> set[str]:
        """The spool segments holding a frame this builder still needs."""
        ...

    def restore(self, load: Callable[[str, int], tuple[str, dict[str, Any], int] | None]) -> int:
        """Read the held frames back through `load` ((event, payload, ts_ns) of the frame
        at (segment, offset), None when it is gone); returns how many were gone."""
        ...


class Stats(Protocol):
    @property
    def lines(self) -> int: ...
    @property
    def malformed(self) -> int: ...


@runtime_checkable
class Replay(Protocol):
    """A recorded session played back as the hook would have seen it."""

    @property
    def session_id(self) -> str: ...
    @property
    def stats(self) -> Stats: ...
    def drafts(self) -> Iterator[Draft]: ...


@runtime_checkable
class Adapter(Protocol):
    """The builder half: for the dispatcher, the blocking path and the commands."""

    @property
    def NAME(self) -> str: ...
    @property
    def EVENTS(self) -> frozenset[str]:
        """The events the builder turns into records."""
        ...

    @property
    def WIRED_EVENTS(self) -> tuple[str, ...]:
        """The events `ways reconcile` wires the hook on."""
        ...

    def new_builder(self, state: str | None = None, transcript: bool = True) -> SessionBuilder:
        """A builder, from a saved state or fresh; `transcript=False` builds from the
        payload alone (the blocking path, `ways sensors fire`)."""
        ...

    def event_of(self, payload: dict[str, Any]) -> str | None:
        """The event name a parsed payload carries."""
        ...

    def offline_drafts(self, payload: dict[str, Any], ts_ns: int) -> list[Draft]:
        """Drafts of one hand-written payload (`ways sensors fire`): no session file,
        missing common fields filled in."""
        ...

    def example(self, section: str) -> dict[str, Any]:
        """A realistic payload yielding `section`, for `ways sensors fire`."""
        ...

    def find_session_file(self, project: str, session: str | None = None) -> str | None:
        """The recorded session file of `session`, or the project's newest one."""
        ...

    def replay(self, path: str) -> Replay:
        """A recorded session file, replayed through this agent's builder."""
        ...

    def settings_path(self, project: str | None) -> str:
        """The settings file `ways reconcile` edits: the user's, or `project`'s."""
        ...

    def wire(self, settings: dict[str, Any], command: str, ours: IsOurs) -> dict[str, Any]:
        """`settings` with `command` wired on every event, replacing handlers of ours."""
        ...

    def unwire(self, settings: dict[str, Any], ours: IsOurs) -> dict[str, Any]:
        """`settings` without our handlers, nor the containers emptied by removing them."""
        ...
