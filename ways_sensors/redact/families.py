"""Provider families known by their shape, derived from the gitleaks and Betterleaks
rule catalogues (MIT; ways_sensors/redact/NOTICE) by scripts/derive_families.py into
families.tsv, read here once. A row: kind; the two-character openings every match
starts with (the token-run pass dispatches on them, shapes.py); the needle a value is
searched by instead when its body can cut a run short (base64, a URL: needles.py), or
nothing; the regex (bounded width, group 1 the secret), in the syntax both Python's
engine and RE2 read.
"""

from __future__ import annotations

import os

TSV = os.path.join(os.path.dirname(__file__), "families.tsv")


def _read() -> tuple[tuple[str, str, str, str], ...]:
    with open(TSV, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f if not line.startswith("#")]
    return tuple((r[0], r[1], r[2], r[3]) for r in rows if len(r) == 4)


TABLE = _read()
