"""A tree's end (evidence/sealer.py, offline.py): a dispatcher ends each tree before it
leaves, so a file cut at its end is caught by `verify --key`, and a session still running
is reported as running; and the cadence (evidence/cadence.py): a quiet session's 40
records, arriving one by one, get a few checkpoints and witness requests, not 40. Real
hooks, real detached dispatchers, the real `ways` command, a witness on loopback."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..conftest import payload
from ..helpers import SID, dispatcher_alive, records, spool_directly, start_dispatcher, wait_until
from .runs import (
    audited,
    calls,
    dispatch,
    every_batch,
    gone,
    hook,
    private_keys_under,
    root_vkey,
    trusting,
)
from .witness_server import Witness

UNPROVEN = re.compile(r"the end (of audit/all in session \S+ )?is not proven")


def verify(install, out: Path, *more: str) -> tuple[int, str]:
    r = install.ways("sensors", "verify", str(out), "--key", root_vkey(install), *more)
    return r.returncode, r.stdout + r.stderr


def lines_of(out: Path) -> list[str]:
    return out.read_text().splitlines(keepends=True)


def is_checkpoint(line: str) -> bool:
    return json.loads(line)["section"] == "checkpoint"


def ended_session(install, out: Path) -> list[str]:
    audited(install, out, batch="{max_records: 3}")
    spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 7)])
    spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
    dispatch(install)
    assert gone(install)
    return lines_of(out)


def test_a_session_cut_at_its_end_is_not_proven(install, tmp_path):
    out = tmp_path / "audit.jsonl"
    whole = ended_session(install, out)
    assert json.loads(whole[-1]).get("end") is True  # the tree's end, signed
    rc, text = verify(install, out)
    assert rc == 0 and "signed: 9 records" in text, text

    # the last records and every checkpoint after them: the chain alone passes
    last_records = max(i for i, x in enumerate(whole) if not is_checkpoint(x))
    out.write_text("".join(whole[: last_records - 1]))
    assert install.ways("sensors", "verify", str(out)).returncode == 0  # no key: intact
    rc, text = verify(install, out)
    assert rc == 3 and UNPROVEN.search(text), text
    assert "signed:" not in text

    # the last records only, their checkpoints kept
    out.write_text("".join(x for i, x in enumerate(whole) if i != last_records))
    rc, text = verify(install, out)
    assert rc == 3 and "not proven (truncated): the end is not proven" in text, text

    # the end's checkpoint only
    out.write_text("".join(whole[:-1]))
    rc, text = verify(install, out)
    assert rc == 3 and UNPROVEN.search(text), text


def test_a_file_whose_last_checkpoint_does_not_end_it_is_not_proven(install, tmp_path):
    """A checkpoint per batch (cadence 0): cut after a batch's checkpoint, every record
    left is signed, and only the missing end says that more may have followed."""
    out = tmp_path / "audit.jsonl"
    every_batch(install)
    whole = ended_session(install, out)
    assert sum(map(is_checkpoint, whole)) == 4  # batches of 3, 3 and 3, and the end
    second = [i for i, x in enumerate(whole) if is_checkpoint(x)][1]
    out.write_text("".join(whole[: second + 1]))
    rc, text = verify(install, out)
    assert rc == 3 and "not proven (end): the end of audit/all in session" in text, text


def test_an_edited_record_never_reads_as_a_pass(install, tmp_path):
    out = tmp_path / "audit.jsonl"
    whole = ended_session(install, out)
    edited = [x.replace('"toolu_0003"', '"toolu_9999"') for x in whole]
    assert edited != whole
    out.write_text("".join(edited))
    rc, text = verify(install, out)
    assert rc == 3 and "broken (edited)" in text
    assert "signed:" not in text  # the signatures check out, the records do not


def test_a_running_session_is_reported_as_running(install, tmp_path):
    out = tmp_path / "audit.jsonl"
    audited(install, out)
    install.config("ways:\n  dispatch_idle_seconds: 600\n")
    spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 3)])
    proc = start_dispatcher(install)
    try:
        assert wait_until(lambda: len(records(out)) == 4, 60)
        assert dispatcher_alive(install)
        rc, text = verify(install, out)
    finally:
        proc.kill()
        proc.wait()
    assert rc == 0, text
    assert f"session {SID} is running: its end is not signed yet" in text


def test_a_quiet_session_of_40_records_gets_a_few_checkpoints_and_an_end(install, tmp_path):
    out = tmp_path / "audit.jsonl"
    audited(install, out)
    with Witness("witness.test/w1", trusting(install)) as w:
        install.config(
            f"ways:\n  witness:\n    url: '{w.url}'\n    key: '{w.vkey}'\n"
            "  evidence:\n    checkpoint_seconds: 30\n    witness_seconds: 30\n"
        )
        hook(install, payload("SessionStart"))
        for i in range(38):  # one by one: each hook's record is a batch of its own
            hook(install, {**payload("PreToolUse"), "tool_use_id": f"toolu_{i:04d}"})
        hook(install, payload("SessionEnd"))
        assert wait_until(lambda: gone(install), 60)
        asked = list(w.answers)
        rc, text = verify(install, out, "--witness-key", w.vkey)
    got = lines_of(out)
    cps = [json.loads(x) for x in got if is_checkpoint(x)]
    assert len(got) - len(cps) == 40
    assert len(cps) <= 10, len(cps)  # at most a quarter of the records' lines
    assert len(asked) <= 10 and set(asked) == {200}, asked
    assert cps[-1].get("end") is True and is_checkpoint(got[-1])  # closed at the end
    assert rc == 0 and "signed: 40 records" in text, text


def test_checkpoints_off_keeps_the_chain_alone(install, tmp_path):
    """`ways.evidence.checkpoints: false` (docs/evidence.md): a chained rule's records go
    with their hash chain and nothing signed: no checkpoint line, no key made, `verify`
    finds the file intact."""
    install.config("ways:\n  evidence:\n    checkpoints: false\n")
    out = tmp_path / "audit.jsonl"
    audited(install, out, batch="{max_records: 3}")
    spool_directly(install, [("SessionStart", payload("SessionStart")), *calls(0, 7)])
    spool_directly(install, [("SessionEnd", payload("SessionEnd"))])
    dispatch(install)
    got = [json.loads(x) for x in lines_of(out)]
    assert [r["section"] for r in got].count("checkpoint") == 0 and len(got) == 9
    assert all(isinstance(r.get("chain"), dict) for r in got)
    assert install.ways("sensors", "verify", str(out)).returncode == 0
    assert private_keys_under(install.state_root) == []
    assert not (install.state_root / "machine-log").exists()
    rc, text = verify(install, out)  # the root key made now, to verify with
    assert rc == 3 and "unsigned" in text, text


def test_lint_knows_every_key_of_the_docs_evidence_block(install):
    """The `ways.evidence` settings docs/evidence.md shows are ones lint accepts (it
    refused `machine_log_seconds` as unknown while the dispatcher read it)."""
    import yaml

    text = (Path(__file__).parents[2] / "docs" / "evidence.md").read_text()
    [block] = re.findall(r"```yaml\n# ~/.config/agent-ways/config.yaml\n(.*?)```", text, re.S)
    evidence = yaml.safe_load(block)["ways"]["evidence"]
    assert {"machine_log_seconds", "checkpoints"} <= set(evidence)
    install.config(yaml.safe_dump({"ways": {"evidence": evidence}}))
    r = install.ways("sensors", "lint")
    assert r.returncode == 0 and "unknown key" not in r.stdout + r.stderr, r.stdout + r.stderr
