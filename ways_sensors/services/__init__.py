"""What the commands (and the terminal UI to come) call: decisions, never printing.

A service takes plain values (a key, a folder, a parsed value), reads and writes
through the rest of the package, and returns a typed result object, or raises one of
the typed errors of errors.py. A command parses its arguments, calls one service and
prints the result for a person or as `--json`; it decides nothing itself.

    settings.py    settings resolution; get, list, help, set, unset
    files.py       sensor files: copy, rename, delete
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
