"""`ways sensors copy|rename|delete [--json]`: arguments in, services/files.py's results out.

Exit codes: 0 done, 2 no such sensor or a bad name, 3 the new name is taken or the
sensor is shipped (copy it instead), 5 the file could not be written.
"""

from __future__ import annotations

import argparse
import json

from ..services import files


def _print(args: argparse.Namespace, result: files.Copied | files.Renamed | files.Deleted) -> None:
    if getattr(args, "json", False):
        print(json.dumps(result.as_json(), indent=2))
    elif isinstance(result, files.Copied):
        print(
            f"copied {result.source} to {result.path}; its rules are disabled until "
            "previewed: " + ", ".join(f"ways sensors test {result.name}/{r}" for r in result.rules)
        )
    elif isinstance(result, files.Renamed):
        print(f"renamed {result.old_path} to {result.path}")
    else:
        print(f"deleted {result.path}")


def copy(args: argparse.Namespace) -> int:
    _print(args, files.copy(args.source, args.dest, args.project))
    return 0


def rename(args: argparse.Namespace) -> int:
    _print(args, files.rename(args.source, args.dest, args.project))
    return 0


def delete(args: argparse.Namespace) -> int:
    _print(args, files.delete(args.name, args.project))
    return 0
