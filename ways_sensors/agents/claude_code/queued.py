"""The input queue of a Claude Code session: messages typed while the agent worked.

The client leaves up to three sightings of one queued message: a `queue-operation`
enqueue later `remove`d, a `queued_command` attachment, and a UserPromptSubmit that
repeats the running turn's prompt_id (builder.py). Whichever is read first is exported
as a `queued_message` record, the others are skipped (`sighting`), so it goes out once,
never also as a user_prompt. Every prompt passes through the queue: one that is
`dequeue`d became a turn of its own and is the user_prompt record; `popAll` was pulled
back. `QueueLedger` is the tracker's half that keeps this ledger (tracker.py persists
its `queued` and `pending` lists with the rest of the session's state).
"""

from __future__ import annotations

from ...records import Draft
from .reread import digest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    MakeDraft = Callable[..., Draft]  # builder.py's draft(section, data, **overrides)

SIGHTINGS = ("remove", "attachment", "submit")  # of one queued message (module docstring)


class QueueLedger:
    """The queued messages seen and still waiting; mixed into tracker.Tracker."""

    queued: list[list[Any]]  # [digest, [sightings]] exported
    pending: list[list[Any]]  # [digest, text, ts] still in the queue

    def sighting(self, dig: str, source: str) -> bool:
        """True the first time a queued message is seen; False for its other sightings
        (SIGHTINGS: each of one message's is seen once, in any order)."""
        for e in self.queued:
            if e[0] == dig and source not in e[1]:
                e[1].append(source)
                if len(e[1]) == len(SIGHTINGS):
                    self.queued.remove(e)  # all seen: a later equal text is a new one
                return False
        self.queued = [*self.queued[-255:], [dig, [source]]]
        return True

    def in_queue(self, text: Any) -> bool:
        """Whether `text` waits in the input queue or was already seen leaving it."""
        if not isinstance(text, str) or not text.strip():
            return False
        dig = digest(text)
        return any(e[0] == dig for e in self.pending) or any(e[0] == dig for e in self.queued)

    def submitted(self, text: Any, draft: MakeDraft) -> list[Draft]:
        """A UserPromptSubmit in the running turn (its prompt_id already began one): a
        message typed while the agent worked, absorbed into the turn."""
        if not isinstance(text, str) or not text.strip():
            return []
        if not self.sighting(digest(text), "submit"):
            return []
        return [self._queued(text, None, draft, "submitted")]

    def _queued(self, text: str, ts: str | None, draft: MakeDraft, how: str) -> Draft:
        d = draft("queued_message", {"text": text, "via": how}, agent_id=None, agent_type="main")
        if ts:
            d.timestamp = ts
        return d

    def _queue_operation(
        self, obj: dict[str, Any], ts: str | None, draft: MakeDraft
    ) -> list[Draft]:
        """The input queue's ledger. Every prompt passes through it: one that is dequeued
        became a turn of its own (UserPromptSubmit exports it as user_prompt); one that is
        removed was absorbed into the running turn: that is a queued message."""
        op, content = obj.get("operation"), obj.get("content")
        if op == "enqueue":
            if (
                isinstance(content, str)
                and content.strip()
                and not content.lstrip().startswith("<task-notification>")
            ):
                self.pending = [*self.pending[-63:], [digest(content), content, ts]]
            else:
                self.pending = [*self.pending[-63:], ["", "", ts]]  # keeps dequeues in step
            return []
        if op == "dequeue":
            self.pending = self.pending[1:]
            return []
        if op == "popAll":
            self.pending = []
            return []
        if op != "remove":
            return []
        entry = None
        if isinstance(content, str) and content:
            dig = digest(content)
            entry = next((e for e in self.pending if e[0] == dig), None)
        elif self.pending:
            entry = self.pending[0]
        if entry is None or not entry[1]:
            if entry is not None:
                self.pending.remove(entry)
            return []
        self.pending.remove(entry)
        if not self.sighting(entry[0], "remove"):
            return []
        return [self._queued(entry[1], entry[2] or ts, draft, "absorbed")]
