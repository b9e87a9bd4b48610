"""The rest of a session on the real client, checked record for record against what it
sent (a raw recording hook beside ours) and what it wrote (the transcript):

1. interactive, `--permission-mode manual`: a Write outside the allow list and the
   project raises a permission prompt; the client notifies (permission_prompt) while it
   waits; the person answers yes;
2. `/clear`: the first session ends (reason clear), a second starts;
3. in the second session one turn, then one whose request fails (529): StopFailure, an
   `error` (print mode may exit before that hook runs, so this is interactive); then
   the client is killed (SIGKILL): no SessionEnd;
4. its dispatcher goes idle with the client gone: a made-up end (`lost`);
5. `claude -p --resume` of the second session: a Write again, now refused (nobody to
   ask in print mode), and a real SessionEnd;
6. `claude -p --continue`: the same session once more.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter

import pytest

from ways_sensors.agents.claude_code.permissions import decision_of

from ..helpers import no_checkpoints, wait_until
from . import harness, messages_api, usage_truth
from .terminal import Terminal, trust

pytestmark = pytest.mark.slow
IDLE = 3  # seconds: the dispatcher goes idle during the permission wait, client alive


def sent(truth, event, **fields):
    return [
        t
        for t in truth
        if t.get("hook_event_name") == event and all(t.get(k) == v for k, v in fields.items())
    ]


def records_of(s, sid):
    path = s.audit_dir / f"{sid}.jsonl"
    if not path.exists():
        return []
    return no_checkpoints([json.loads(x) for x in path.read_text().splitlines() if x.strip()])


@pytest.fixture(scope="module")
def life(tmp_path_factory):
    s = harness.prepare(tmp_path_factory.mktemp("claude-life"), idle=IDLE)
    trust(s.home, s.project, harness.API_KEY)
    outside = s.root / "outside"
    outside.mkdir()
    messages_api.WRITE_DIR = str(outside)
    server, url = messages_api.serve()
    env = harness.client_env(s, url)
    exe = harness.claude_bin()
    term = Terminal([exe, "--allowedTools", "Bash", "Agent", "--permission-mode", "manual"],
                    s.project, env)  # fmt: skip
    try:
        assert term.wait_for(r"/effort|for shortcuts", 120), term.text()[-2000:]
        term.type("first [write] it")
        assert wait_until(lambda: sent(s.truth(), "Notification"), 90), term.text()[-2000:]
        term.press_enter()  # the prompt's first choice: yes
        assert wait_until(lambda: sent(s.truth(), "Stop"), 90), term.text()[-2000:]
        term.type("/clear")
        assert wait_until(lambda: sent(s.truth(), "SessionStart", source="clear"), 90)
        term.type("plain after clear")
        assert wait_until(lambda: len(sent(s.truth(), "Stop")) == 2, 90), term.text()[-2000:]
        term.type("now [apierr] please")
        assert wait_until(lambda: sent(s.truth(), "StopFailure"), 90), term.text()[-2000:]
        time.sleep(0.5)  # the hooks of that event have written the truth; let them exit
    finally:
        term.kill()
    s.cleared = sent(s.truth(), "SessionStart", source="clear")[0]["session_id"]
    s.first = sent(s.truth(), "SessionStart", source="startup")[0]["session_id"]

    def lost():
        return [r for r in records_of(s, s.cleared) if r["data"].get("reason") == "lost"]

    assert wait_until(lost, 120), records_of(s, s.cleared)[-3:]
    try:
        for args in (
            ["-p", "again [write] it", "--resume", s.cleared],
            ["-p", "plain continued", "--continue"],
        ):
            r = subprocess.run([exe, *args, "--output-format", "json"], cwd=s.project,
                               env=env, capture_output=True, text=True, timeout=180)  # fmt: skip
            s.results.append(json.loads(r.stdout))
    finally:
        server.shutdown()
        server.server_close()
    harness.wait_for_dispatchers(s, timeout=90)
    return s


def test_the_session_went_as_scripted(life):
    truth = life.truth()
    events = Counter(t["hook_event_name"] for t in truth)
    assert events["PermissionRequest"] == 2 and events["StopFailure"] == 1
    assert sent(truth, "Notification", notification_type="permission_prompt")
    assert sent(truth, "SessionEnd", reason="clear", session_id=life.first)
    assert [r.get("is_error") for r in life.results] == [False, False]
    assert {t["session_id"] for t in truth} == {life.first, life.cleared}


def test_every_permission_request_once_joined_to_its_call(life):
    truth = life.truth()
    for sid in (life.first, life.cleared):
        calls = sent(truth, "PreToolUse", session_id=sid)
        want = []
        for t in sent(truth, "PermissionRequest", session_id=sid):
            [call] = [c for c in calls if c["tool_input"] == t["tool_input"]][-1:]
            want.append(
                (t["tool_name"], t["tool_input"], t["permission_mode"], call["tool_use_id"])
            )
        got = [
            (
                r["data"]["tool_name"],
                r["data"]["input"],
                r["data"]["mode"],
                r["data"]["tool_use_id"],
            )
            for r in records_of(life, sid)
            if r["section"] == "permission" and r["data"]["phase"] == "request"
        ]
        assert got == want and got
        assert all(r["data"]["suggestions"] for r in records_of(life, sid)
                   if r["section"] == "permission" and r["data"]["phase"] == "request")  # fmt: skip


def transcript_decisions(s, sid):
    path = next((s.home / ".claude" / "projects").glob(f"*/{sid}.jsonl"))
    out = {}
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        content = (obj.get("message") or {}).get("content")
        if obj.get("type") == "user" and "permissionDecision" in obj and isinstance(content, list):
            [tid] = [b["tool_use_id"] for b in content if b.get("type") == "tool_result"]
            out[tid] = obj["permissionDecision"]
    return out


def test_every_call_has_one_decision_as_the_client_wrote_it(life):
    truth = life.truth()
    seen = {}
    for sid in (life.first, life.cleared):
        client = transcript_decisions(life, sid)
        decisions = [
            r["data"]
            for r in records_of(life, sid)
            if r["section"] == "permission" and r["data"]["phase"] == "decision"
        ]
        ids = Counter(d["tool_use_id"] for d in decisions)
        assert set(ids.values()) == {1}
        assert set(ids) == {t["tool_use_id"] for t in sent(truth, "PreToolUse", session_id=sid)}
        for d in decisions:
            assert d["detail"] == client[d["tool_use_id"]]
            assert d["decision"] == decision_of(client[d["tool_use_id"]])
            seen[(d["tool_name"], d["decision"])] = d
    assert ("Write", "allowed_by_user") in seen  # the person said yes
    assert ("Write", "denied") in seen  # print mode: nobody to ask
    assert ("Bash", "allowed_by_rule") in seen  # --allowedTools Bash
    assert seen[("Write", "allowed_by_user")]["mode"] == "default"


def test_every_notification_once(life):
    truth = life.truth()
    for sid in (life.first, life.cleared):
        want = [(t["notification_type"], t["message"]) for t in sent(truth, "Notification",
                                                                     session_id=sid)]  # fmt: skip
        got = [(r["data"]["type"], r["data"]["message"]) for r in records_of(life, sid)
               if r["section"] == "notification"]  # fmt: skip
        assert got == want
    assert any(r["section"] == "notification" for r in records_of(life, life.first))


def test_the_api_failure_is_an_error_not_a_reply(life):
    [t] = sent(life.truth(), "StopFailure")
    records = records_of(life, life.cleared)
    [err] = [r for r in records if r["section"] == "error"]
    assert (err["data"]["error"], err["data"]["text"]) == (t["error"], t["last_assistant_message"])
    assert "E2E-529" in err["data"]["text"]
    assert not [r for r in records if r["section"] == "assistant_response"
                and "E2E-529" in r["data"]["text"]]  # fmt: skip


def test_sessions_linked(life):
    starts = [(r["session_id"], r["data"]["source"], r["data"].get("previous_session_id", "-"))
              for sid in (life.first, life.cleared) for r in records_of(life, sid)
              if r["section"] == "session_start"]  # fmt: skip
    assert starts == [
        (life.first, "startup", "-"),
        (life.cleared, "clear", life.first),  # /clear: the session it cleared
        (life.cleared, "resume", life.cleared),  # --resume: goes on in place
        (life.cleared, "resume", life.cleared),  # --continue
    ]
    truth_starts = [(t["session_id"], t["source"]) for t in sent(life.truth(), "SessionStart")]
    assert [x[:2] for x in starts] == truth_starts


def test_the_killed_client_gets_one_made_up_end_and_later_real_ones(life):
    truth = life.truth()
    records = records_of(life, life.cleared)
    ends = [r for r in records if r["section"] == "session_end"]
    real = [r for r in ends if not r["data"].get("synthesized")]
    [lost] = [r for r in ends if r["data"].get("synthesized")]
    assert lost["data"]["reason"] == "lost" and lost["hook_event"] is None
    assert (
        [r["data"]["reason"] for r in real]
        == [t["reason"] for t in sent(truth, "SessionEnd", session_id=life.cleared)]
        == ["other", "other"]
    )
    order = [(r["section"], r["data"].get("source") or r["data"].get("reason")) for r in records
             if r["section"] in ("session_start", "session_end")]  # fmt: skip
    assert order == [("session_start", "clear"), ("session_end", "lost"),
                     ("session_start", "resume"), ("session_end", "other"),
                     ("session_start", "resume"), ("session_end", "other")]  # fmt: skip
    # the cleared one ended for real; nothing was made up for it
    first_ends = [r for r in records_of(life, life.first) if r["section"] == "session_end"]
    assert [(r["data"]["reason"], r["data"].get("synthesized")) for r in first_ends] == [
        ("clear", None)
    ]
    seqs = [r["seq"] for r in records]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    path = life.audit_dir / f"{life.cleared}.jsonl"
    r = life.ways("sensors", "verify", str(path), "--rule", "e2e/all")
    assert r.returncode == 0, r.stdout


def test_every_reply_carries_model_and_the_sum_of_its_api_calls(life):
    for sid in (life.first, life.cleared):
        path = next((life.home / ".claude" / "projects").glob(f"*/{sid}.jsonl"))
        replies = [
            r["data"]
            for r in records_of(life, sid)
            if r["section"] == "assistant_response" and r["agent_type"] == "main"
        ]
        assert replies and all("usage_missing" not in d for d in replies)
        assert [usage_truth.tokens(d) for d in replies] == usage_truth.replies(path)


def test_both_sessions_are_signed_to_their_ends_through_the_kill_and_the_resumes(life):
    """The cleared session's client was killed (its end made up by its dispatcher), then
    resumed with `-p --resume` and `--continue`: its tree went on each time, so `verify
    --key` proves every record of both sessions and their ends (issue 35 items 1, 2)."""
    keys = life.ways("keys", "show", "--json")
    assert keys.returncode == 0, keys.stderr
    vkey = json.loads(keys.stdout)["verifier_key"]
    for sid in (life.first, life.cleared):
        path = life.audit_dir / f"{sid}.jsonl"
        r = life.ways("sensors", "verify", str(path), "--key", vkey)
        assert r.returncode == 0, r.stdout
        assert f"signed: {len(records_of(life, sid))} records in 1 tree(s)" in r.stdout
