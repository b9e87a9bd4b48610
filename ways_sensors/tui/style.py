"""The sensors tab's look: one stylesheet for every screen (Textual CSS), and each
cell's style."""

from __future__ import annotations

from rich.text import Text

from . import rows as model

CSS = """
#top { height: 1; background: $boost; padding: 0 1; }
#filter { height: 3; }
#table { height: 1fr; }
#detail { height: 4; padding: 0 1; color: $text-muted; }
#message { height: auto; max-height: 4; padding: 0 1; color: $warning; }
#live { height: 4; padding: 0 1; background: $boost; color: $text-muted; }
NameDialog, ConfirmDialog, HelpScreen { align: center middle; }
.dialog {
    width: 90; height: auto; border: round $accent; background: $surface; padding: 1 2;
}
.hint, .help { color: $text-muted; }
.name { margin-top: 1; text-style: bold; }
RuleForm Input { height: 1; border: none; padding: 0 1; background: $boost; }
RuleForm Input:focus { background: $primary 30%; }
RuleForm Checkbox { height: 1; border: none; padding: 0 1; background: $boost; }
RuleForm Select { width: 40; }
RuleForm SelectCurrent { height: 1; border: none; padding: 0 1; }
RuleForm TextArea { border: none; padding: 0 1; }
.error { color: $error; height: auto; }
.snippet { height: auto; min-height: 2; max-height: 10; }
#fields { height: 1fr; }
#buttons { height: auto; }
#form-title { text-style: bold; }
#note, #seen { color: $warning; }
#summary { height: auto; padding: 0 1; }
#records { height: 1fr; padding: 0 1; }
"""


STATE_STYLE = {"on": "bold green", "refused": "bold red", "error": "bold red"}


def styled(row: model.Row, column: str) -> Text:
    """A cell as rich Text (never markup): sensors bold, states and failures coloured."""
    text = row.cells[column]
    style = ""
    if column == "name" and row.kind != "rule":
        style = "bold"
    elif column == "state":
        style = STATE_STYLE.get(text, "dim" if text.startswith("off") else "")
    elif column == "off" and text == "content":
        style = "bold yellow"
    elif column == "health" and text not in ("", "ok") and not text.startswith("owed"):
        style = "bold red"  # failing, dead letters, unhealthy: `ways status` exits 8
    elif column in FAILURES and text not in ("", "0"):
        style = "bold red"  # bold survives NO_COLOR
    return Text(text, style=style)


FAILURES = frozenset(
    {"timeouts", "kills", "refusals", "errors", "drops", "rejected", "lost", "dead"}
)


def guard_terminal() -> None:
    """Every control character in any text the tab draws is shown as `\\u00XX`, as the
    commands show it (table.printable): rich and Textual strip only BEL, BS, VT, FF and
    CR from text, so an ESC from a sensor file, a record or a preview set the terminal's
    title or cleared the screen. Their strip tables (one dict each, the default argument
    of the function that strips) are extended once, before the app draws anything."""
    from rich import control
    from textual import content

    controls = [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]
    shown = {c: "\\u%04x" % c for c in controls}
    for table in (control._CONTROL_STRIP_TRANSLATE, content._CONTROL_STRIP_TRANSLATE):
        table.update(shown)
