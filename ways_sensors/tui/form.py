"""A rule's form: one field per spec field, each change checked at once.

Fields, their types, defaults and help come from services/edit.py (the typed spec).
Every change runs edit.check, so a field's error is the message `ways settings set`
gives for that key, shown under the field; saving is refused while any field is in
error. `where` and `dispatch` are YAML snippets. Off-machine and `redact: none`
warnings appear as soon as the edit would cause them. Saving writes the sensor's own
file at the layer chosen (user, or the project when it is allowed) through the same
writer as the command, then returns to the table with what was written.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Footer, Input, Label, Select, Static, TextArea

from ..config.layers import Catalog
from ..errors import WaysError
from ..services import edit
from ..state.layout import rule_label
from .rows import home_short


def on_off(name: str, value: bool) -> str:
    """A checkbox's label, carrying its state in words (readable under NO_COLOR)."""
    return f"{name}: {'yes' if value else 'no'}"


class RuleForm(Screen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "save"),
        Binding("escape", "cancel", "cancel"),
    ]

    def __init__(self, cat: Catalog, sensor: str, rule: str, new: bool = False) -> None:
        super().__init__()
        self.cat, self.sensor, self.rule, self.new = cat, sensor, rule, new
        self.spec_fields = edit.fields()
        loaded = cat.sensors.get(sensor)
        self.base = edit.values_of(loaded, rule)
        self.values: dict[str, Any] = dict(self.base)
        self.snippet_errors: dict[str, str] = {}
        layer = loaded.rules[rule].layer if loaded and rule in loaded.rules else "user"
        self.write_layer = "project" if layer == "project" and cat.project_allowed else "user"
        self.checked = edit.Check()

    def compose(self) -> ComposeResult:
        title = ("New rule " if self.new else "Rule ") + rule_label(self.sensor, self.rule)
        yield Static(title, id="form-title", markup=False)
        yield Static(id="target", markup=False)
        with VerticalScroll(id="fields"):
            if self.cat.project_allowed:
                yield Label("layer: where saving writes")
                yield Select(
                    [("user", "user"), ("project", "project")],
                    value=self.write_layer,
                    allow_blank=False,
                    id="layer",
                )
            for f in self.spec_fields:
                yield from self.field(f)
        yield Static(id="warnings", markup=False)
        yield Static(id="general", markup=False, classes="error")
        with Horizontal(id="buttons"):
            yield Button("Save (ctrl+s)", id="save", variant="primary")
            yield Button("Cancel (escape)", id="cancel")
        yield Static(
            "Saved changes take effect in running sessions at their next event.",
            id="note",
        )
        yield Footer()

    def field(self, f: edit.Field) -> list[Widget]:
        value = self.values[f.name]
        default = "required" if f.required else f"default {edit.to_text(f, f.default) or 'none'}"
        label = Label(f"{f.name}  ({f.type}; {default})", classes="name", markup=False)
        widget: Widget
        wid = f"field-{f.name}"
        if f.kind == "bool":
            widget = Checkbox(
                on_off(f.name, bool(value)),
                bool(value),
                id=wid,
                disabled=self.new and f.name == "enabled",
            )
        elif f.kind == "choice":
            options = [(c, c) for c in f.choices]
            widget = Select(options, value=str(value), allow_blank=False, id=wid)
        elif f.kind == "yaml":
            widget = TextArea(edit.to_text(f, value), id=wid, classes="snippet")
        else:
            widget = Input(edit.to_text(f, value), id=wid)
        helptext = f.help
        if self.new and f.name == "enabled":
            helptext += "; a new rule starts disabled until its preview has been seen"
        help_ = Static(helptext, classes="help", markup=False)
        error = Static(id=f"error-{f.name}", classes="error", markup=False)
        return [label, widget, help_, error]

    def on_mount(self) -> None:
        if self.app.is_headless:  # a steady cursor: screenshots do not depend on timing
            for w in self.query(Input):
                w.cursor_blink = False
            for t in self.query(TextArea):
                t.cursor_blink = False
        self.revalidate()

    # --- changes ---------------------------------------------------------------------

    def _field(self, widget_id: str | None) -> edit.Field | None:
        name = (widget_id or "").removeprefix("field-")
        return next((f for f in self.spec_fields if f.name == name), None)

    def _changed(self, widget_id: str | None, raw: Any) -> None:
        f = self._field(widget_id)
        if f is None:
            return
        self.snippet_errors.pop(f.name, None)
        if f.kind in ("bool", "choice"):
            self.values[f.name] = raw
        else:
            try:
                self.values[f.name] = edit.from_text(f, raw)
            except edit.SnippetError as exc:
                self.snippet_errors[f.name] = f"{edit.key(self.sensor, self.rule, f.name)}: {exc}"
        self.revalidate()

    def on_input_changed(self, event: Input.Changed) -> None:
        self._changed(event.input.id, event.value)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._changed(event.text_area.id, event.text_area.text)

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        f = self._field(event.checkbox.id)
        if f is not None:  # the state in words: a checkbox shows it only by colour
            event.checkbox.label = on_off(f.name, event.value)
        self._changed(event.checkbox.id, event.value)

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "layer":
            self.write_layer = str(event.value)
            self.revalidate()
        else:
            self._changed(event.select.id, str(event.value))

    def revalidate(self) -> None:
        """Check the edit now; show each field's error, the warnings, and the target."""
        try:
            self.checked = edit.check(
                self.cat, self.sensor, self.rule, self.values, self.base, self.write_layer, self.new
            )
        except WaysError as exc:  # the target file itself is unreadable or not YAML
            self.checked = edit.Check({"": exc.message})
        errors = {**self.checked.errors, **self.snippet_errors}
        for f in self.spec_fields:
            shown = self.query_one(f"#error-{f.name}", Static)
            shown.update(errors.get(f.name, ""))
            shown.display = f.name in errors
        self.query_one("#general", Static).update(errors.get("", ""))
        warnings = "\n".join(f"warning: {w}" for w in self.checked.warnings)
        self.query_one("#warnings", Static).update(home_short(warnings))
        target = edit.target_of(self.sensor, self.write_layer, self.cat.project)
        self.query_one("#target", Static).update(
            f"saving writes the {self.write_layer} layer: {home_short(target)}"
        )
        self.query_one("#save", Button).disabled = bool(errors)

    # --- save ------------------------------------------------------------------------

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()
        else:
            self.action_cancel()

    def action_save(self) -> None:
        self.revalidate()
        if self.snippet_errors or not self.checked.ok:
            self.query_one("#general", Static).update(
                "not saved: fix the fields in error first"
                + (f"\n{self.checked.errors['']}" if "" in self.checked.errors else "")
            )
            return
        try:
            done = edit.save(
                self.cat, self.sensor, self.rule, self.values, self.base, self.write_layer, self.new
            )
        except WaysError as exc:
            self.query_one("#general", Static).update(
                f"not saved: {exc.message}" + (f"; {exc.hint}" if exc.hint else "")
            )
            return
        if not done:
            self.dismiss("nothing changed")
            return
        rid = rule_label(self.sensor, self.rule)
        lines = [f"saved {len(done)} field(s) of {rid} to {done[-1].file}"]
        if self.new:
            lines = [
                f"{rid} saved disabled to {done[-1].file}: p previews it, then space enables it"
            ]
        lines += [d.overridden.message for d in done if d.overridden]
        lines.append("running sessions pick it up at their next event")
        self.dismiss("; ".join(lines))

    def action_cancel(self) -> None:
        self.dismiss(None)
