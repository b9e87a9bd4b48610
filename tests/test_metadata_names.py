"""`fields: metadata` through the real hook and dispatcher: a PermissionDenied's
`reason` (the classifier's own sentence) and the names of `data.extra`'s keys never
reach the consumer; a reason that is a name (SessionEnd's `other`) still does."""

from __future__ import annotations

from .helpers import dispatcher_alive, lines, wait_until

SID = "meta-names-1"
REASON = "Deleting the quokka_ledger folder outside the project looks destructive"
KEY = "quokka_private_plan_named_in_a_key"


def test_metadata_hides_a_free_text_reason_and_extra_key_names(install, tmp_path):
    out = tmp_path / "meta.jsonl"
    install.sensor(
        "meta",
        f"""\
        rules:
          names:
            sections: [permission, session_end]
            delivery: at_least_once
            fields: metadata
            dispatch: {{file: {{path: '{out}'}}}}
        """,
    )
    base = {"session_id": SID, "cwd": str(install.project), "transcript_path": ""}
    denied = {
        **base,
        "hook_event_name": "PermissionDenied",
        "permission_mode": "auto",
        "tool_name": "Bash",
        "tool_use_id": "toolu_denied_1",
        "tool_input": {"command": "rm -rf ../quokka_ledger"},
        "reason": REASON,
        KEY: 3,
        "effort": {"level": "medium"},
    }
    for payload in (denied, {**base, "hook_event_name": "SessionEnd", "reason": "other"}):
        r = install.hook(payload)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert wait_until(lambda: len(lines(out)) == 2, timeout=60)
    assert wait_until(lambda: not dispatcher_alive(install, SID))

    raw = out.read_text()
    for text in (REASON, "quokka", KEY, "destructive"):
        assert text not in raw, text
    perm, end = lines(out)
    assert perm["section"] == "permission" and end["section"] == "session_end"
    assert set(perm["data"]["reason"]) == {"hmac", "size"}  # a digest, as for any text
    assert perm["data"]["reason"]["size"] == len(REASON.encode())
    extra = perm["data"]["extra"]
    hidden = [k for k in extra if k.startswith("~")]
    assert len(hidden) == 2 and all(len(k) == 17 for k in hidden)  # KEY and effort
    assert 3 in extra.values()  # a number says nothing: kept under its hidden name
    assert end["data"]["reason"] == "other"  # a name stays a name
    assert perm["data"]["tool_name"] == "Bash"
