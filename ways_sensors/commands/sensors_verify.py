"""`ways sensors verify FILE [--rule SENSOR/RULE] [--json]`: is the hash chain intact?

Exit 0 when every chain in the file is intact, 3 when a link is broken (each break
named with its line, rule_seq and kind: edited, deleted, inserted, reordered,
truncated, missing), 2 on a usage error or a --rule that names no known rule.
JSON (stable): {"ok", "file", "records", "break": break | null, "chains": [{"sensor",
  "rule", "session_id", "records", "first", "last", "duplicates", "gaps", "head",
  "break"}], "breaks": [break, ...] (every one, in file order), "rule": null | {"sensor",
  "rule", "defined", "target", "renders_here", "sessions_with_heads", "sessions_owed"}}
  break: {"kind", "line", "rule_seq", "message", "session_id"}
"""

from __future__ import annotations

import argparse
import json
import os
import stat

from ..errors import INVALID, UsageError

SHOWN = 10  # breaks printed for people; --json has them all


def run(args: argparse.Namespace) -> int:
    from ..verify import UnknownRule, verify

    if args.rule is not None:
        sensor, _, rule = args.rule.partition("/")
        if not sensor or not rule or "/" in rule:
            raise UsageError(f"--rule takes SENSOR/RULE, not {args.rule!r}")
    try:
        if not stat.S_ISREG(os.stat(args.file).st_mode) and not os.path.isdir(args.file):
            raise UsageError(f"{args.file} is not a regular file")  # a FIFO, /dev/zero ...
        report = verify(args.file, args.rule)
    except UnknownRule as exc:
        raise UsageError(
            f"no rule {exc} in any layer, and no session has a chain head for it",
            hint="`ways sensors list` shows the rules",
        ) from None
    except FileNotFoundError:
        raise UsageError(f"{args.file}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{args.file} is a folder; give the chained file") from None
    except PermissionError:
        raise UsageError(f"{args.file}: permission denied") from None
    brk = report.first
    if args.json:
        print(
            json.dumps(
                {
                    "ok": brk is None,
                    "file": args.file,
                    "records": report.records,
                    "break": brk.as_json() if brk else None,
                    "chains": [c.as_json() for c in report.chains],
                    "breaks": [b.as_json() for b in report.breaks],
                    "rule": report.rule,
                },
                indent=2,
            )
        )
        return INVALID if brk else 0
    if brk:
        for b in report.breaks[:SHOWN]:
            print(f"{args.file}:{b.line}: broken ({b.kind}): {b.message}")
        if len(report.breaks) > SHOWN:
            print(f"... and {len(report.breaks) - SHOWN} more; --json lists them all")
        return INVALID
    chains = report.chains
    dups = sum(c.duplicates for c in chains)
    gaps = sum(len(c.gaps) for c in chains)
    extra = []
    if dups:
        extra.append(f"{dups} repeated deliveries")
    if gaps:
        extra.append(f"{gaps} gaps left by queue_cap drops")
    heads = ""
    if args.rule:
        if not chains:
            heads = f"; no record of {args.rule} and no head that wrote here"
        elif all(c.head for c in chains):
            heads = "; tail matches the stored head"
        else:
            heads = "; no stored head for some chains"
    print(
        f"{args.file}: intact: {report.records} records in {len(chains)} chain(s)"
        + (f" ({', '.join(extra)})" if extra else "")
        + heads
    )
    return 0
