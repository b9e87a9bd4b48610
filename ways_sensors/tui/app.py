"""The sensors tab's app and main screen: the table, live counts and every action.

Every action goes through the service layer the commands use: toggles and saves through
services/settings.py's writer (comments kept), copy, rename and delete through
services/files.py, preview and fire through services/preview.py and fire.py. About
once a second it looks at the state files (a stat of each, rows.Live): only when one
changed does it take a status snapshot (the counters and health `ways status` reads)
and rewrite the count and health cells that changed; the footer is rewritten only
when its text changed (an update lays the whole screen out again). An idle tab with
2,000 rules so costs a stat per file a second, not a read and parse of each and a
re-render. When a sensor file, config.yaml or the preview record changed on disk
(another command, an editor), it reloads, keeping the row.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from ..config.layers import Catalog, load
from ..errors import WaysError
from ..services import catalog, files, status
from ..services.edit import key
from ..services.fire import Fired, fire
from ..services.health import THRESHOLD_S
from ..services.settings import set_setting, show
from ..state.layout import rule_label, split_rule_label
from . import rows as model
from .form import RuleForm
from .screens import ConfirmDialog, HelpScreen, NameDialog, PreviewScreen
from .style import CSS, styled

LIVE_NOTE = "toggles and saves take effect in running sessions at their next event"


class SensorTable(DataTable[Text]):
    """The table, with `enter` named in the footer."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "select_cursor", "form")]


class MainScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle_row", "toggle"),
        Binding("p", "preview", "preview"),
        Binding("f", "fire", "fire"),
        Binding("c", "copy", "copy"),
        Binding("r", "rename", "rename"),
        Binding("d", "delete", "delete"),
        Binding("n", "new_rule", "new rule"),
        Binding("slash", "filter", "filter"),
        Binding("question_mark", "help", "help"),
        Binding("q", "app.quit", "quit"),
        Binding("escape", "clear_filter", "clear filter", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.cat: Catalog | None = None
        self.listing: catalog.Listing | None = None
        self.rows: list[model.Row] = []
        self.shown: list[model.Row] = []
        self.snap: status.Snapshot | None = None
        self.sig: tuple[Any, ...] = ()
        self.live = model.Live()  # when the state files last changed
        self.live_text = ""  # the footer as last shown

    def compose(self) -> ComposeResult:
        yield Static(id="top", markup=False)
        yield Input(placeholder="filter: rows narrow as you type; enter ends", id="filter")
        # the name column stays on screen when the table scrolls right
        yield SensorTable(cursor_type="row", zebra_stripes=True, id="table", fixed_columns=1)
        yield Static(id="detail", markup=False)
        yield Static(id="message", markup=False)
        yield Static(id="live", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#filter", Input).display = False
        self.reload()
        self.query_one("#table", DataTable).focus()
        self.set_interval(1.0, self.tick)

    # --- data ------------------------------------------------------------------------

    @property
    def table(self) -> SensorTable:
        return self.query_one("#table", SensorTable)

    def reload(self, select: str | None = None) -> None:
        """Load the layers again and rebuild the table, keeping (or moving to) a row."""
        row = self.current()
        select = select or (row.key if row else None)
        self.sig = model.signature()
        self.cat = load()
        self.listing = catalog.listing(cat=self.cat)
        self.rows = model.build(self.listing)
        self.live.changed()  # the state files as this snapshot reads them
        self.snap = status.snapshot(self.cat, events_tail=3, health_threshold=THRESHOLD_S)
        model.count(self.rows, self.snap)
        allowed = "allowed" if self.listing.project_allowed else "not in ways.project_sensors"
        self.query_one("#top", Static).update(
            f"ways sensors · project {model.home_short(self.listing.project)} ({allowed})"
            f" · {LIVE_NOTE}"
        )
        self.render_table(select)
        self.render_live()

    def render_table(self, select: str | None = None) -> None:
        table = self.table
        filt = self.query_one("#filter", Input).value
        self.shown = model.narrow(self.rows, filt)
        columns = list(model.COLUMNS)
        table.clear(columns=True)
        width = model.widths(self.rows)
        for k, h in columns:
            table.add_column(h, key=k, width=width[k])
        for row in self.shown:
            table.add_row(*(styled(row, k) for k, _ in columns), key=row.key)
        keys = [r.key for r in self.shown]
        if select in keys:
            table.move_cursor(row=keys.index(select))
        self.show_detail()

    def render_live(self) -> None:
        text = "\n".join(model.live_lines(self.snap)) if self.snap is not None else ""
        if text and text != self.live_text:  # an update lays the screen out again
            self.live_text = text
            self.query_one("#live", Static).update(text)

    def tick(self) -> None:
        """About once a second: reload when sensor files changed, else refresh the counts
        when a state file changed, else only the footer's live dispatchers."""
        if model.signature() != self.sig:
            self.reload()
            return
        if self.cat is None or self.snap is None:
            return
        if not self.live.changed():  # nothing to read again: a dispatcher's lock is probed
            self.snap = model.with_dispatchers(self.snap)
            self.render_live()
            return
        self.snap = status.snapshot(self.cat, events_tail=3, health_threshold=THRESHOLD_S)
        before = {r.key: dict(r.cells) for r in self.rows}
        model.count(self.rows, self.snap)
        table = self.table
        for row in self.shown:
            for k in model.LIVE:
                if row.cells[k] != before[row.key].get(k):
                    table.update_cell(row.key, k, styled(row, k))
        self.render_live()

    def current(self) -> model.Row | None:
        table = self.table
        if not self.shown or table.cursor_row < 0 or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row]

    def show_detail(self) -> None:
        row = self.current()
        self.query_one("#detail", Static).update(row.detail if row else "no rows")

    def say(self, text: str) -> None:
        self.query_one("#message", Static).update(model.home_short(text))

    def on_data_table_row_highlighted(self, _: DataTable.RowHighlighted) -> None:
        self.show_detail()

    def on_data_table_row_selected(self, _: DataTable.RowSelected) -> None:
        self.action_edit()

    # --- filter ----------------------------------------------------------------------

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.render_table()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "filter":
            return
        event.input.display = bool(event.value)
        self.table.focus()
        if self.shown:
            self.table.move_cursor(row=0)
        self.show_detail()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.display = False
        self.render_table()
        self.table.focus()

    # --- actions ---------------------------------------------------------------------

    def _project(self, row: model.Row) -> str | None:
        """Where a write for this row goes: the project layer for a project sensor."""
        s = row.sensor_row
        return self.cat.project if self.cat and s and s.layer == "project" else None

    def _set(self, row: model.Row, k: str, value: Any) -> None:
        try:
            done = set_setting(k, value, self._project(row))
        except WaysError as exc:
            self.say(exc.message + (f"; {exc.hint}" if exc.hint else ""))
            return
        text = f"{done.key} = {show(done.value)} ({done.file}); {LIVE_NOTE}"
        self.say(done.overridden.message if done.overridden else text)
        self.reload()

    def action_toggle_row(self) -> None:
        row = self.current()
        if row is None:
            return
        if row.kind == "rule" and row.rule:
            r = row.rule
            if not r.own_enabled and r.waiting:
                self.say(f"{r.id} starts disabled until its preview has been seen: here it is")
                self.action_preview()
                return
            self._set(row, key(r.sensor, r.name, "enabled"), not r.own_enabled)
        elif row.kind == "sensor" and row.sensor_row:
            s = row.sensor_row
            self._set(row, f"ways.sensors.{s.name}.enabled", not s.enabled)
        else:
            self.say(row.detail)

    def action_edit(self) -> None:
        row = self.current()
        if row is None or row.kind != "rule" or not row.rule or not self.cat:
            self.say("select a rule to open its form (n makes a new one)")
            return
        self.app.push_screen(RuleForm(self.cat, row.rule.sensor, row.rule.name), self._done)

    def _done(self, message: str | None) -> None:
        if message:
            self.say(message)
        self.reload()

    def action_preview(self) -> None:
        row = self.current()
        if row is None or not row.rule_id:
            self.say("select a rule to preview it")
            return
        self.app.push_screen(PreviewScreen(row.rule_id), self._done)

    def action_fire(self) -> None:
        row = self.current()
        if row is None or row.sensor_row is None:
            self.say("select a sensor or a rule to fire a test record")
            return
        rules = [row.rule] if row.rule else list(row.sensor_row.rules)
        shots = [(r.id, r.sections[0]) for r in rules if r.sections]
        self.say("firing " + ", ".join(f"{rid} ({sec})" for rid, sec in shots) + " ...")
        self.fire_all(shots, bool(row.rule))  # one rule's row asks for it, even disabled

    @work(thread=True, exclusive=True, group="fire")
    def fire_all(self, shots: list[tuple[str, str]], include_disabled: bool = False) -> None:
        lines = []
        for rid, section in shots:
            try:
                fired: Fired = fire(rid, section, include_disabled=include_disabled)
                lines += [model.outcome_text(r) for r in fired.results]
                lines += [f"{s}: skipped (disabled)" for s in fired.skipped]
            except WaysError as exc:
                lines.append(f"{rid}: {exc.message}")
        self.app.call_from_thread(self.say, "\n".join(lines))

    def _sensor_of(self, row: model.Row | None, verb: str) -> catalog.SensorRow | None:
        if row is None or row.sensor_row is None:
            self.say(f"select a sensor (or one of its rules) to {verb} it")
            return None
        s = row.sensor_row
        if verb != "copy" and s.shipped_only:
            self.say(
                f"{s.name} is a shipped sensor: read-only, it cannot be {verb}d; "
                f"c copies it to a sensor of your own"
            )
            return None
        return s

    def action_copy(self) -> None:
        s = self._sensor_of(self.current(), "copy")
        if s is None:
            return

        def done(name: str | None) -> None:
            if not name:
                return
            try:
                c = files.copy(s.name, name)
            except WaysError as exc:
                self.say(exc.message)
                return
            self.say(f"copied {s.name} to {c.path}; its rules start disabled until previewed (p)")
            self.reload(select=f"s:{c.name}")

        self.app.push_screen(
            NameDialog(f"Copy {s.name} to a new sensor named", f"{s.name}-copy"), done
        )

    def action_rename(self) -> None:
        row = self.current()
        s = self._sensor_of(row, "rename")
        if s is None or row is None:
            return
        project = self._project(row)

        def done(name: str | None) -> None:
            if not name:
                return
            try:
                r = files.rename(s.name, name, project)
            except WaysError as exc:
                self.say(exc.message + (f"; {exc.hint}" if exc.hint else ""))
                return
            self.say(f"renamed {r.old_path} to {r.path}")
            self.reload(select=f"s:{r.new}")

        self.app.push_screen(NameDialog(f"Rename {s.name} to", s.name), done)

    def action_delete(self) -> None:
        row = self.current()
        s = self._sensor_of(row, "delete")
        if s is None or row is None:
            return
        project = self._project(row)
        own = [f for layer, f in s.files if layer == ("project" if project else "user")]
        shipped = any(layer == "shipped" for layer, _ in s.files)
        question = f"Delete {s.name}? This removes {model.home_short(own[-1] if own else s.file)}."
        if shipped:
            question += f" The shipped {s.name} stays."

        def done(yes: bool | None) -> None:
            if not yes:
                self.say("nothing deleted")
                return
            try:
                d = files.delete(s.name, project)
            except WaysError as exc:
                self.say(exc.message + (f"; {exc.hint}" if exc.hint else ""))
                return
            self.say(f"deleted {d.path}")
            self.reload()

        self.app.push_screen(ConfirmDialog(question), done)

    def action_new_rule(self) -> None:
        row = self.current()
        sensor = (row.sensor if row and row.kind in ("sensor", "rule") else None) or "mine"

        def done(name: str | None) -> None:
            if not name or not self.cat:
                return
            from ..config.spec import NAME_RE

            s, r = split_rule_label(name)
            if not NAME_RE.match(s) or not NAME_RE.match(r):
                self.say(f"{name!r}: name it SENSOR/RULE, lowercase letters, digits, - and _")
                return
            exists = s in self.cat.sensors and r in self.cat.sensors[s].rules
            if exists:
                self.say(f"{rule_label(s, r)} exists already: enter opens its form")
                return
            self.app.push_screen(RuleForm(self.cat, s, r, new=True), self._done)

        self.app.push_screen(
            NameDialog("New rule (SENSOR/RULE), starts disabled", f"{sensor}/", select=False), done
        )

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())


class SensorsApp(App[None]):
    """`ways sensors tui`."""

    TITLE = "ways sensors"
    ENABLE_COMMAND_PALETTE = False
    CSS = CSS

    def get_default_screen(self) -> Screen[Any]:
        return MainScreen()
