"""How much the state root holds: the line `ways status` prints about it, and the size
retention.py logs for a session it removes."""

from __future__ import annotations

import os
from typing import Any

from ..state.layout import Layout
from .ages import abandoned_after


def usage_of(folder: str, cap: int = 200_000) -> tuple[int, int, bool]:
    """(bytes, files, complete) under `folder`, links not followed; at most `cap`
    entries are counted (complete is False past it)."""
    total = files = seen = 0
    stack = [folder]
    while stack:
        try:
            it = os.scandir(stack.pop())
        except OSError:
            continue
        with it:
            for e in it:
                seen += 1
                if seen > cap:
                    return total, files, False
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    else:
                        total += e.stat(follow_symlinks=False).st_size
                        files += 1
                except OSError:
                    continue
    return total, files, True


def usage(layout: Layout | None = None) -> dict[str, Any]:
    """{"root", "bytes", "files", "sessions", "complete", "abandoned_after_s"}."""
    layout = layout or Layout()
    total, files, complete = usage_of(layout.root)
    return {
        "root": layout.root,
        "bytes": total,
        "files": files,
        "sessions": len(layout.sessions()),
        "complete": complete,
        "abandoned_after_s": abandoned_after(),
    }


def describe(state: dict[str, Any]) -> str:
    """`usage` as the line `ways status` prints."""
    more = "" if state["complete"] else " or more"
    return (
        f"state: {state['root']} holds {human(state['bytes'])}{more} in {state['files']} "
        f"file(s), {state['sessions']} session folder(s); one nothing wrote in for "
        f"{state['abandoned_after_s'] / 86400:g} day(s) is removed at the next dispatcher start"
    )


def human(n: int) -> str:
    """1536 -> '1.5 KiB'."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
