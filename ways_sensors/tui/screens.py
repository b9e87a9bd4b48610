"""The sensors tab's other screens: a rule's preview, the help, and two small dialogs.

The preview is services/preview.py's, the same as `ways sensors test`: the records the
rule would have sent on the project's newest recorded session (or the one named by id
or by its transcript's path), masked, nothing dispatched; showing it marks the rule's
preview seen. Why the other records were not sent comes from services/explain.py, as
`ways sensors explain` says it: the commonest reasons, counted.
"""

from __future__ import annotations

import json
import os
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Input, Label, Static

from ..errors import WaysError
from ..services import explain
from ..services.preview import Preview, preview, seen
from ..services.tabkeys import TUI_KEYS
from .rows import home_short

SHOWN = 50  # records shown in full; `ways sensors test --json` has every one

KEYS = TUI_KEYS  # one text: the tab's help and `tui --help` (services/tabkeys.py)


class NameDialog(ModalScreen[str | None]):
    """Ask for a name; enter gives it, escape gives None."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]

    def __init__(self, question: str, value: str = "", select: bool = True) -> None:
        super().__init__()
        self.question, self.value, self.select = question, value, select

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, markup=False)
            yield Input(self.value, id="name", select_on_focus=self.select)
            yield Label("enter: ok   escape: cancel", classes="hint")

    def on_mount(self) -> None:
        box = self.query_one(Input)
        box.cursor_blink = not self.app.is_headless
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmDialog(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "yes"),
        Binding("n", "answer(False)", "no"),
        Binding("escape", "answer(False)", "no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, markup=False)
            yield Label("y: yes   n or escape: no", classes="hint")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "close", "close")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(KEYS, markup=False)

    def action_close(self) -> None:
        self.dismiss(None)


def summary(p: Preview) -> str:
    sections = "   ".join(f"{s} {n}" for s, n in sorted(p.matched.items()))
    return (
        f"{p.rule} over {home_short(p.transcript)}\n"
        f"{p.lines} lines ({p.malformed} unreadable), {p.records} records, "
        f"{len(p.sent)} would be sent; nothing was dispatched\n"
        f"{sections or 'no record matched'}"
    )


class PreviewScreen(Screen[str | None]):
    """A rule's preview; dismissing it tells the main screen the preview was seen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "back"),
        Binding("s", "session", "other session"),
    ]

    def __init__(self, rule: str, session: str | None = None) -> None:
        super().__init__()
        self.rule, self.session = rule, session
        self.result: Preview | None = None

    def compose(self) -> ComposeResult:
        yield Static(f"Preview of {self.rule}: replaying ...", id="summary", markup=False)
        yield Input(
            placeholder="a session id or a transcript file's path (empty: the newest); "
            "enter replays it",
            id="session",
        )
        with VerticalScroll(id="records"):
            yield Static(id="sent", markup=False)
        yield Static(id="seen", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        box = self.query_one("#session", Input)
        box.display = False
        box.cursor_blink = not self.app.is_headless
        self.query_one("#records").focus()
        self.run_preview(self.session)

    @work(thread=True, exclusive=True, group="preview")
    def run_preview(self, session: str | None) -> None:
        """`session` is an id, or a path to a session file (it holds a / or ends .jsonl)."""
        path = None
        if session and ("/" in session or session.endswith((".jsonl", ".json"))):
            path, session = os.path.abspath(os.path.expanduser(session)), None
        try:
            result = preview(self.rule, session=session, transcript=path, mark=False)
            missed = explain.missed(self.rule, result.transcript)
        except WaysError as exc:
            self.app.call_from_thread(self.failed, exc)
            return
        self.app.call_from_thread(self.show, result, missed)

    def failed(self, exc: WaysError) -> None:
        if not self.is_attached:  # dismissed while the replay ran
            return
        self.query_one("#summary", Static).update(
            f"Preview of {self.rule}: {home_short(exc.message)}\n"
            "s names another session; the rule stays as it is"
        )

    def show(self, p: Preview, missed: list[tuple[str, int]] | None = None) -> None:
        if not self.is_attached:  # dismissed while the replay ran: not seen
            return
        self.result = p
        why = "".join(f"\n  {n} not sent: {reason}" for reason, n in (missed or [])[:3])
        self.query_one("#summary", Static).update(summary(p) + why)
        body = "\n".join(json.dumps(r, indent=2, ensure_ascii=False) for r in p.sent[:SHOWN])
        if len(p.sent) > SHOWN:
            body += f"\n... {len(p.sent) - SHOWN} more: `ways sensors test {p.rule} --json`"
        self.query_one("#sent", Static).update(body or "(nothing would be sent)")
        seen(p.rule)  # shown: the gate opens, as after `ways sensors test`
        self.query_one("#seen", Static).update(
            "preview seen: space on the rule now enables it (escape goes back)"
        )

    def action_session(self) -> None:
        box = self.query_one("#session", Input)
        box.display = True
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#summary", Static).update(f"Preview of {self.rule}: replaying ...")
        self.run_preview(event.value.strip() or None)

    def action_close(self) -> None:
        self.dismiss(f"{self.rule}: preview seen" if self.result else None)
