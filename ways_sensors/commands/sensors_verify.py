"""`ways sensors verify FILE [--rule SENSOR/RULE] [--json]`: is the hash chain intact?

Exit 0 when every chain in the file is intact, 3 at the first broken link (named with
its line, rule_seq and kind: edited, deleted, inserted, reordered, truncated).
JSON (stable): {"ok", "file", "records", "break": {"kind", "line", "rule_seq",
  "message"} | null, "chains": [{"sensor", "rule", "session_id", "records", "first",
  "last", "duplicates", "gaps", "head", "break"}]}
"""

from __future__ import annotations

import json

from ..errors import INVALID, UsageError


def run(args) -> int:
    from ..verify import verify

    if args.rule and "/" not in args.rule:
        raise UsageError(f"--rule takes SENSOR/RULE, not {args.rule!r}")
    try:
        chains, brk, n = verify(args.file, args.rule)
    except FileNotFoundError:
        raise UsageError(f"{args.file}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{args.file} is a folder; give the chained file") from None
    if args.json:
        print(
            json.dumps(
                {
                    "ok": brk is None,
                    "file": args.file,
                    "records": n,
                    "break": brk.as_json() if brk else None,
                    "chains": [c.as_json() for c in chains],
                },
                indent=2,
            )
        )
        return INVALID if brk else 0
    if brk:
        print(f"{args.file}:{brk.line}: broken ({brk.kind}): {brk.message}")
        return INVALID
    dups = sum(c.duplicates for c in chains)
    gaps = sum(len(c.gaps) for c in chains)
    extra = []
    if dups:
        extra.append(f"{dups} repeated deliveries")
    if gaps:
        extra.append(f"{gaps} gaps left by queue_cap drops")
    heads = (
        ""
        if not args.rule
        else (
            "; tail matches the stored head"
            if all(c.head for c in chains)
            else "; no stored head for some chains"
        )
    )
    print(
        f"{args.file}: intact: {n} records in {len(chains)} chain(s)"
        + (f" ({', '.join(extra)})" if extra else "")
        + heads
    )
    return 0
