"""What the commands (and the terminal UI to come) call: decisions, never printing.

A service takes plain values (a key, a folder, a parsed value), reads and writes
through the rest of the package, and returns a typed result object, or raises one of
the typed errors of errors.py. A command parses its arguments, calls one service and
prints the result for a person or as `--json`; it decides nothing itself.

    settings.py    settings resolution; get, list, help, set, unset
    files.py       sensor files: copy, rename, delete
"""
