"""What the commands and the sensors tab call: decisions, never printing.

A service takes plain values (a key, a folder, a parsed value), reads and writes
through the rest of the package, and returns a typed result object, or raises one of
the typed errors of errors.py. A command parses its arguments, calls one service and
prints the result for a person or as `--json`; it decides nothing itself.

    settings.py    settings resolution; get, list, help, set, unset
    files.py       sensor files: copy, rename, delete
    status.py      counters, dead letters, live dispatchers, the events log's tail
    preview.py     a rule's preview on a recorded session (`ways sensors test`)
    fire.py        a test record through a rule's real path (`ways sensors fire`)
    catalog.py     every sensor and rule described (`ways sensors list`, the tab)
    edit.py        a rule's fields; an edit checked and saved as `settings set` does
"""

from __future__ import annotations


def project_folder(project: str | None) -> str | None:
    """`project` as an absolute path, or None for the user layer. A folder that does not
    exist is a UsageError: a mistyped `--project` must not create one."""
    import os

    from ..errors import UsageError

    if not project:
        return None
    path = os.path.abspath(os.path.expanduser(project))
    if not os.path.isdir(path):
        raise UsageError(f"no project folder {path}", hint="name an existing folder")
    return path
