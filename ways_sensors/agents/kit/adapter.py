"""The adapter base: what each `agents/<name>/adapter.py` shares (agents.protocols.Adapter).

An adapter is a module (the type checker holds each to the Protocol), so the base is
not a class to inherit but the functions an adapter module binds to its own names:

    _kit = Offline(Builder, COMMON, EXAMPLES, blank={"transcript_path": ""})
    new_builder, offline_drafts, example = _kit.new_builder, _kit.offline_drafts, _kit.example

`Offline` builds from payloads alone (`ways sensors fire`, the blocking path): the
agent's common payload fields fill in what a hand-written payload leaves out, and
`blank` empties the fields that would name a session file. `unreplayable(label)` is
the pair (find_session_file, replay) of an agent whose session files are not read.
`session_file_check(prefix, markers)` is the `is_session_file` of an agent whose
session files are told by their name or by keys on their first line.
"""

from __future__ import annotations

from ...records import Draft
from ..drafting import event_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:  # the Protocols too: protocols.py imports typing, off a hook's path
    from typing import Any, NoReturn

    from ..protocols import SessionBuilder

    NewBuilder = Callable[..., SessionBuilder]  # (state, transcript=...) -> a builder


class Offline:
    """An agent's builder, fresh or resumed, and its drafts of hand-written payloads."""

    def __init__(
        self,
        builder: NewBuilder,
        common: Mapping[str, Any],
        examples: Mapping[str, Mapping[str, Any]],
        blank: Mapping[str, Any] | None = None,
    ) -> None:
        self.builder = builder
        self.common = dict(common)
        self.examples = examples
        self.blank = dict(blank or {})

    def new_builder(self, state: str | None = None, transcript: bool = True) -> SessionBuilder:
        """A builder, from a saved state or fresh; `transcript=False`: payloads alone."""
        return self.builder(state, transcript=transcript)

    def offline_drafts(self, payload: dict[str, Any], ts_ns: int) -> list[Draft]:
        """Drafts of one hand-written payload: no session file, common fields filled in."""
        body = {**self.common, **payload, **self.blank}
        return self.builder(None, transcript=False).build(event_of(body) or "", body, ts_ns)

    def example(self, section: str) -> dict[str, Any]:
        """A realistic payload yielding `section` (KeyError for one the agent lacks)."""
        return {**self.common, **self.examples[section]}


def unreplayable(
    label: str,
) -> tuple[Callable[..., str | None], Callable[[str], NoReturn]]:
    """(find_session_file, replay) of an agent whose session files ways cannot read:
    none is ever found, and a replay is refused in one line naming the agents that can."""

    def find_session_file(project: str, session: str | None = None) -> str | None:
        return None

    def replay(path: str) -> NoReturn:
        from ...errors import UsageError  # not on the blocking hook's path

        raise UsageError(
            f"ways sensors test cannot read {label}'s session files",
            hint="replay a Claude Code, Codex or Gemini CLI session instead",
        )

    return find_session_file, replay


def session_file_check(prefix: str, *markers: bytes) -> Callable[[str, bytes], bool]:
    """`is_session_file(path, head)`: the file's name starts with `prefix`, or its first
    line (spaces dropped) holds every one of `markers`."""

    def is_session_file(path: str, head: bytes) -> bool:
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        compact = head.replace(b" ", b"")
        return name.startswith(prefix) or all(m in compact for m in markers)

    return is_session_file
