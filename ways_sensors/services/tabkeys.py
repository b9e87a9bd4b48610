"""The sensors tab's keys, in one text: the tab's help screen (tui/screens.py) and
`ways sensors tui --help` (commands/parser.py) both show it."""

TUI_KEYS = """\
space     toggle the selected rule or sensor (a never-previewed rule shows its preview)
enter     open the rule's form
p         preview: what the rule would send on the newest session, nothing dispatched
f         fire a test record through the real target: delivered, refused or timed out
c         copy the sensor to a new name (its rules start disabled)
r         rename the sensor (yours only: shipped sensors are read-only)
d         delete the sensor (asks first; shipped sensors are read-only)
n         new rule (starts disabled until its preview has been seen)
/         filter: rows narrow as you type; enter ends it, escape clears it
?         this help
q         quit

Toggles and saves write the sensor's own file (comments kept), as `ways settings set`
does, and take effect in running sessions at their next event. Counts refresh about
once a second from the counters `ways status` reads."""
