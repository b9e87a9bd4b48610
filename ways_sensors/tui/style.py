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
    elif column in FAILURES and text not in ("", "0"):
        style = "bold red"  # bold survives NO_COLOR
    return Text(text, style=style)


FAILURES = frozenset(
    {"timeouts", "kills", "refusals", "errors", "drops", "rejected", "lost", "dead"}
)
