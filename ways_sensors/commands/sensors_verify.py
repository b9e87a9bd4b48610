"""`ways sensors verify [FILE|FOLDER ...] [--rule SENSOR/RULE] [--key ROOTKEY] [--json]`: intact?

Every file named (and every regular file under a folder named) is checked as one set:
a chain that goes on from one file to another (a `{date}` path puts each record in its
own day's file) is followed across them, and across the files that differ from each
only in their dates; a file whose chain goes on elsewhere is reported as continuing
there, never as a break. With `--rule` and no file: every file the rule's path
template renders to, and each session whose stored head says it wrote something but
has no record in any of them is `missing`.

With `--key ROOTKEY` (the root verifier key `ways keys show` prints, or a file holding
it) the files' signed checkpoints are checked too, from the files alone and
`--checkpoints FILE` (signed notes a witness or another consumer received), with
nothing from the state root (evidence/offline.py; docs/evidence.md); `--witness-key`
also asks for the witness's cosignatures. Their breaks are printed as `not proven
(kind)` and the JSON gains `"evidence"` (offline.Result.as_json).

With `--machine-log DIR` (a copy of the state root's `machine-log/`, the machine
log's tiles: evidence/machinecheck.py) every session the log holds must have records in
the files, and each of its checkpoints the log holds must be in them: a session deleted
whole is `missing`, one cut at its end `absent`. `--machine-key` (the log's verifier key,
`ways keys show`) checks the log's checkpoint signature, `--witness-key` its
cosignature; the JSON gains `"machine_log"` (machinecheck.Result.as_json).

Exit 0 when every chain is intact, 3 when a link is broken (each break named with its
file, line, rule_seq and kind: edited, deleted, inserted, reordered, truncated,
missing; or, with --key, a checkpoint that does not prove them), 2 on a usage error
or a --rule that names no known rule.

JSON (stable) for one file: {"ok", "file", "records", "break": break | null, "chains":
  [chain], "breaks": [break, ...] (every one, in file order), "rule": null | {"sensor",
  "rule", "defined", "target", "renders_here", "sessions_with_heads", "sessions_owed"}}
For several files (or --rule alone): {"ok", "break": break | null, "breaks": [every
  break], "files": [the one-file object of each], "absent": [break, ...]}
  chain: {"sensor", "rule", "session_id", "records", "first", "last", "duplicates",
  "gaps", "head", "break", "continues_from": [file], "continues_in": [file],
  "restarts": [line, ...] (where rule_seq 1 began again from the genesis hash)}
  break: {"kind", "line", "rule_seq", "message", "session_id", "file"}
"""

from __future__ import annotations

import argparse
import json
import os
import stat
from typing import Any

from ..errors import INVALID, UsageError
from ..state.layout import rule_label

SHOWN = 10  # breaks printed for people; --json has them all


def run(args: argparse.Namespace) -> int:
    from ..verify import Result, TooMany, UnknownRule, verify, verify_files

    if args.rule is not None:
        sensor, _, rule = args.rule.partition("/")
        if not sensor or not rule or "/" in rule:
            raise UsageError(f"--rule takes SENSOR/RULE, not {args.rule!r}")
    files: list[str] = list(args.files)
    if not files and args.rule is None:
        raise UsageError("name a chained file or folder, or --rule SENSOR/RULE")
    for f in files:
        _check_path(f)
    try:
        if len(files) == 1 and not os.path.isdir(files[0]):
            report = verify(files[0], args.rule)
            result = Result([report])
        else:
            result = verify_files(files, args.rule)
    except UnknownRule as exc:
        raise UsageError(
            f"no rule {exc} in any layer, and no session has a chain head for it",
            hint="`ways sensors list` shows the rules",
        ) from None
    except TooMany as exc:
        raise UsageError(f"{exc} holds too many files; name fewer") from None
    except FileNotFoundError as exc:
        raise UsageError(f"{exc.filename}: no such file") from None
    except PermissionError as exc:
        raise UsageError(f"{exc.filename}: permission denied") from None
    if args.rule and not files and not result.reports and not result.absent:
        print(f"no file of {args.rule} and no session with a head that wrote one")
        return 0
    proof = _evidence(args, files)
    machine = _machine(args, files)
    brk = result.first
    single = len(files) == 1 and len(result.reports) == 1 and not os.path.isdir(files[0])
    if args.json:
        out: dict[str, Any]
        if single:
            out = _one_json(result.reports[0])
        else:
            out = {
                "ok": brk is None,
                "break": brk.as_json() if brk else None,
                "breaks": [b.as_json() for b in result.breaks],
                "files": [_one_json(r) for r in result.reports],
                "absent": [b.as_json() for b in result.absent],
            }
        if proof is not None:
            out["evidence"] = proof.as_json()
            out["ok"] = out["ok"] and proof.ok
        if machine is not None:
            out["machine_log"] = machine.as_json()
            out["ok"] = out["ok"] and machine.ok
        print(json.dumps(out, indent=2))
        return 0 if out["ok"] else INVALID
    shown = 0
    for r in result.reports:
        shown += _print(r, args.rule, shown)
    for b in result.absent:
        if shown < SHOWN:
            print(f"{args.rule}: broken ({b.kind}): {b.message}")
        shown += 1
    if shown > SHOWN:
        print(f"... and {shown - SHOWN} more; --json lists them all")
    if proof is not None:
        _print_evidence(proof, brk is None)
    if machine is not None:
        _print_machine(machine)
    if not single:
        _summary(result, proof)
    bad = brk or (proof is not None and not proof.ok) or (machine is not None and not machine.ok)
    return INVALID if bad else 0


def _summary(result: Any, proof: Any) -> None:
    """Several files or a folder: how many files, sessions and records, and which
    sessions are not proven (a broken chain, or with --key a break of their tree)."""
    chains = [c for r in result.reports for c in r.chains if c.records]
    sessions = {c.session_id for c in chains}
    bad = {c.session_id for c in chains if c.brk is not None}
    bad |= {b.session_id for b in result.absent if getattr(b, "session_id", None)}
    if proof is not None:
        bad |= {b.session_id for b in proof.breaks if b.session_id}
    line = (
        f"{len(result.reports)} file(s), {len(sessions)} session(s), "
        f"{sum(c.records for c in chains)} record(s)"
    )
    if bad:
        named = ", ".join(sorted(bad)[:SHOWN]) + (" ..." if len(bad) > SHOWN else "")
        line += f"; not proven: {len(bad)} session(s): {named}"
    elif proof is not None:
        line += "; every session proven"
    print(line)


def _evidence(args: argparse.Namespace, files: list[str]) -> Any:
    """With --key: the signed checkpoints (evidence/offline.py), from the files alone."""
    if args.key is None:
        if args.checkpoints or args.all_present or (args.witness_key and not args.machine_log):
            raise UsageError("--checkpoints, --witness-key and --all-present need --key ROOTKEY")
        return None
    from ..evidence import note, offline
    from ..verify.files import expand, siblings

    try:
        root = offline.read_key(args.key, note.ED25519)
        witness = (
            offline.read_key(args.witness_key, note.COSIGNATURE_V1) if args.witness_key else None
        )
    except (note.NoteError, OSError) as exc:
        raise UsageError(
            f"not a verifier key: {exc}", hint="`ways keys show` prints the root key"
        ) from None
    if args.checkpoints:
        _check_path(args.checkpoints)
    if not files:
        raise UsageError("--key checks files: name them")
    named = expand(files)
    paths = list(dict.fromkeys([*named, *(s for p in named for s in siblings(p))]))
    proof = offline.verify(paths, root, args.checkpoints, witness, args.all_present)
    from ..state.layout import Layout  # a session that runs here has not ended: not a break

    offline.running(proof, lambda sid: os.path.isdir(Layout().session_dir(sid)))
    return proof


def _machine(args: argparse.Namespace, files: list[str]) -> Any:
    """With --machine-log: every session the machine log holds must be in the files
    (evidence/machinecheck.py)."""
    if args.machine_log is None:
        if args.machine_key:
            raise UsageError("--machine-key needs --machine-log DIR")
        return None
    from ..evidence import machinecheck, note, offline
    from ..verify.files import expand, siblings

    if not os.path.isdir(args.machine_log):
        raise UsageError(f"{args.machine_log}: not a folder (the machine log's prefix)")
    if not files:
        raise UsageError("--machine-log checks files: name them")
    try:
        key = offline.read_key(args.machine_key, note.ED25519) if args.machine_key else None
        witness = (
            offline.read_key(args.witness_key, note.COSIGNATURE_V1) if args.witness_key else None
        )
    except (note.NoteError, OSError) as exc:
        raise UsageError(f"not a verifier key: {exc}") from None
    named = expand(files)
    paths = list(dict.fromkeys([*named, *(s for p in named for s in siblings(p))]))
    return machinecheck.check(paths, args.machine_log, key, args.rule, witness)


def _print_machine(m: Any) -> None:
    for p in m.problems[:SHOWN]:
        print(f"machine log: not proven ({p.kind}): {p.message}")
    if len(m.problems) > SHOWN:
        print(f"... and {len(m.problems) - SHOWN} more; --json lists them all")
    if m.ok:
        signed = "signed by the key given" if m.signed else "its signature not checked"
        signed += ", cosigned by the witness" if m.cosigned else ""
        print(
            f"machine log: {m.sessions} session(s) in {m.size} entries, every one in the "
            f"files ({m.origin}, {signed})"
        )


def _print_evidence(proof: Any, intact: bool) -> None:
    for b in proof.breaks[:SHOWN]:
        where = f"{b.file}:{b.line}: " if b.file and b.line else ""
        print(f"{where}not proven ({b.kind}): {b.message}")
    if len(proof.breaks) > SHOWN:
        print(f"... and {len(proof.breaks) - SHOWN} more; --json lists them all")
    signed = sum(len(t.checkpoints) for t in proof.trees)
    cosigned = sum(t.cosigned for t in proof.trees)
    for sid in proof.running:
        print(f"session {sid} is running: its end is not signed yet")
    if proof.ok and intact:  # never a line that reads as a pass below a broken chain
        line = (
            f"signed: {sum(len(t.leaves) for t in proof.trees)} records in "
            f"{len(proof.trees)} tree(s) under {signed} checkpoint(s), signed by "
            f"{proof.epochs} epoch key(s) proven from the root"
        )
        print(line + (f"; {cosigned} cosigned by the witness" if cosigned else ""))
    for origin in proof.absent[:3]:
        print(f"  checkpoints of {origin} name records these files do not hold")
    if len(proof.absent) > 3:  # a witness's whole store: every other session's
        print(f"  ... and {len(proof.absent) - 3} more tree(s) these files hold nothing of")


def _check_path(f: str) -> None:
    try:
        mode = os.stat(f).st_mode
    except FileNotFoundError:
        raise UsageError(f"{f}: no such file") from None
    except PermissionError:
        raise UsageError(f"{f}: permission denied") from None
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise UsageError(f"{f} is not a regular file")  # a FIFO, /dev/zero ...


def _one_json(report: Any) -> dict[str, Any]:
    brk = report.first
    return {
        "ok": brk is None,
        "file": report.file,
        "records": report.records,
        "break": brk.as_json() if brk else None,
        "chains": [c.as_json() for c in report.chains],
        "breaks": [b.as_json() for b in report.breaks],
        "rule": report.rule,
    }


def _print(report: Any, rule: str | None, shown: int) -> int:
    """Print one file's verdict (at most SHOWN breaks in all); the breaks it had."""
    name = report.file
    if report.breaks:
        for b in report.breaks:
            if shown < SHOWN:
                print(f"{name}:{b.line}: broken ({b.kind}): {b.message}")
            shown += 1
        return len(report.breaks)
    chains = report.chains
    dups = sum(c.duplicates for c in chains)
    gaps = sum(len(c.gaps) for c in chains)
    extra = []
    if dups:
        extra.append(f"{dups} repeated deliveries")
    if gaps:
        extra.append(f"{gaps} gaps left by queue_cap drops")
    heads = ""
    if rule:
        if not chains:
            heads = f"; no record of {rule} and no head that wrote here"
        elif all(c.head for c in chains):
            heads = "; tail matches the stored head"
        else:
            heads = "; no stored head for some chains"
    print(
        f"{name}: intact: {report.records} records in {len(chains)} chain(s)"
        + (f" ({', '.join(extra)})" if extra else "")
        + heads
    )
    for c in chains:
        for p in c.continues_from:
            print(f"  session {c.session_id} ({rule_label(c.sensor, c.rule)}) continues from {p}")
        for p in c.continues_in:
            print(f"  session {c.session_id} ({rule_label(c.sensor, c.rule)}) continues in {p}")
        for line in c.restarts:
            print(
                f"  session {c.session_id} ({rule_label(c.sensor, c.rule)}) restarts at rule_seq 1 "
                f"on line {line} (resumed after its ledger entry was pruned)"
            )
    return 0
