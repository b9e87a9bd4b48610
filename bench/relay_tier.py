"""The relay-tier chaos run of issue 37: 4 sessions of 2,500 chained records each through
the real dispatchers to a relay rsyslogd and on to a central one, each SIGKILLed and
restarted 20 times at random; then what reached the central file, and what `ways
sensors verify --key` says of it. Three tiers (tests/relay.py): `relp`, the reference
configurations of docs/fleet/ (a relay without a queue of its own); `relp-disk`, the
same relay with a queue on disk; `tcp`, plain TCP syslog with the queue on disk.

    .venv/bin/python bench/relay_tier.py [--per-session N] [--kills K] [--protocols relp,tcp]

Needs rsyslog and rsyslog-relp (scripts/setup.sh installs them as root). Prints one
Markdown row per protocol for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conftest import Install, kill_dispatchers
from tests.relay import run_tier


def findings(report: str) -> str:
    """What verify named, by kind: `broken (reordered)` 3, `not proven (differs)` 1, ..."""
    try:
        data = json.loads(report)
    except ValueError:
        return "?"
    kinds: dict[str, int] = {}
    for b in data.get("breaks") or []:
        key = str(b.get("kind") or b.get("why") or "break")
        kinds[key] = kinds.get(key, 0) + 1
    return ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-session", type=int, default=2500)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--protocols", default="relp,relp-disk,tcp", help="comma-separated")
    args = ap.parse_args()
    head = ["protocol", "sent", "distinct at central", "missing", "duplicates"]
    head += ["kills (relay, central)", "verify", "verify names", "seconds"]
    print("| " + " | ".join(head) + " |")
    print("|---|---:|---:|---:|---:|---|---|---:|---:|")
    for protocol in args.protocols.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            install = Install(Path(tmp))
            try:
                got = run_tier(install, Path(tmp) / "tier", protocol, args.per_session, args.kills)
            finally:
                kill_dispatchers(Path(tmp))
            kills = got["kills"]
            verdict = {0: "intact", 3: "broken"}.get(got["verify_code"], str(got["verify_code"]))
            print(
                f"| {protocol} | {got['sent']:,} | {got['distinct']:,} | {got['missing']:,} "
                f"| {got['duplicates']:,} | {kills.get('relay', 0)}, {kills.get('central', 0)} "
                f"| {verdict} | {findings(got['verify'])} | {got['seconds']} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
