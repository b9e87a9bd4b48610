"""The sensors tab: `ways sensors tui`, a Textual app over the service layer.

    rows.py      the table as plain data (no Textual): rows, cells, filter, footer lines
    app.py       the app and its main screen: table, live counts, keys and actions
    form.py      a rule's form, validated as `ways settings set` validates
    screens.py   the preview, the help and the small dialogs (a name, a confirmation)
    style.py     the stylesheet

Textual comes with the optional `tui` extra; nothing else in the package imports this
package, so the hook and every other command run without Textual installed.
"""
