"""Claude Code, the builder half (agents.protocols.Adapter): what the registry hands out.

The dispatcher and the blocking path build through `new_builder`, `ways sensors test`
replays through `find_session_file` and `replay`, `ways sensors fire` uses `example`
and `offline_drafts`, `ways reconcile` wires through `settings_path`, `wire` and
`unwire`. The work is done in the modules beside this one.
"""

from __future__ import annotations

from ..drafting import event_of
from ..kit.adapter import Offline
from . import NAME, examples
from .builder import HANDLERS, Builder
from .tracker import Tracker
from .wiring import EVENTS as WIRED_EVENTS
from .wiring import settings_path, unwire, wire

EVENTS = frozenset(HANDLERS)

__all__ = [
    "NAME",
    "EVENTS",
    "WIRED_EVENTS",
    "new_builder",
    "event_of",
    "offline_drafts",
    "example",
    "find_session_file",
    "replay",
    "settings_path",
    "wire",
    "unwire",
]


def new_builder(state: str | None = None, transcript: bool = True) -> Builder:
    return Builder(Tracker.from_json(state) if state else None, transcript=transcript)


_kit = Offline(new_builder, examples.COMMON, examples.EXAMPLES, blank={"transcript_path": ""})
offline_drafts, example = _kit.offline_drafts, _kit.example


def find_session_file(project: str, session: str | None = None) -> str | None:
    from .replay import find_transcript  # not on the blocking hook's path (replay.py)

    return find_transcript(project, session)


def replay(path: str) -> Replay:
    from .replay import Replay

    return Replay(path)


TYPE_CHECKING = False
if TYPE_CHECKING:  # the type checker holds the adapter to its Protocol
    import ways_sensors.agents.claude_code.adapter as _adapter

    from ..protocols import Adapter
    from .replay import Replay

    _adapter_checked: Adapter = _adapter
