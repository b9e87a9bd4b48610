"""The user's config.yaml for a process that most often finds none (a dispatcher).

`layers.read_config` loads the YAML reader (PyYAML, a large share of a dispatcher's
start: bench/RESULTS.md, 2026-12-03 17:35) to read a file that is usually absent.
`data()` looks first: with no config.yaml it gives {} without loading it. A config.yaml
that cannot be read gives {} too, as read_config does (its problem is for `ways sensors
lint`, not for the dispatcher's idle exit, retention age or metrics textfile).
"""

from __future__ import annotations

import os
from typing import Any

from .. import roots


def data(path: str | None = None) -> dict[str, Any]:
    """config.yaml as a mapping ({} when there is none or it is broken)."""
    path = path or roots.config_file()
    from .managed import files  # the managed layer's (most often none either)

    for each in [path, *files()]:
        try:
            os.stat(each)
            break
        except FileNotFoundError:
            continue
        except OSError:
            break  # read_config says what is wrong with it
    else:
        return {}
    from .layers import read_config

    config, _ = read_config(path)
    return config


def stamp(path: str) -> tuple[int, int]:
    """(mtime_ns, size) of `path`, (0, -1) when it cannot be stat'ed: changes when it is
    written, replaced, made or removed."""
    try:
        st = os.stat(path)
    except OSError:
        return (0, -1)
    return (st.st_mtime_ns, st.st_size)
