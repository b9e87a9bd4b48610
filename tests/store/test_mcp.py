"""`ways mcp` as a real stdio MCP server (a subprocess, JSON-RPC lines on its pipes):
the handshake, the tools' list, a search that finds a command an earlier session ran,
its session's timeline and the record whole, the protocol's errors, and no planted
secret in any answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..planting import planted
from .play import PLANT, SECRETS, leaks, play


class Client:
    def __init__(self, install):
        exe = Path(sys.executable).parent / "ways"
        self.proc = subprocess.Popen(
            [str(exe), "mcp"],
            env=install.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.next_id = 0
        self.raw: list[bytes] = []

    def send(self, msg: dict | bytes) -> None:
        line = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def read(self) -> dict:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        self.raw.append(line)
        return json.loads(line)

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        answer = self.read()
        assert answer["id"] == self.next_id
        return answer

    def tool(self, name: str, **arguments) -> tuple[object, bool]:
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        text = result["content"][0]["text"]
        return (text if result["isError"] else json.loads(text)), result["isError"]

    def close(self) -> tuple[int, bytes]:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(30)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        rest = self.proc.stdout.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code, rest


def test_the_agent_finds_a_command_of_an_earlier_session(install):
    assert install.ways("settings", "set", "ways.sensors.store.enabled", "true").returncode == 0
    sid = play(install, "codex", lambda value: planted(value, PLANT))
    shown = json.loads(install.ways("sessions", "show", sid, "--json").stdout)["records"]
    call = next(r for r in shown if r["section"] == "tool_call" and r["data"].get("command"))
    command = call["data"]["command"]

    c = Client(install)
    init = c.request(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}},
    )["result"]
    assert init["protocolVersion"] == "2025-06-18" and "tools" in init["capabilities"]
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})  # no answer
    names = [t["name"] for t in c.request("tools/list")["result"]["tools"]]
    assert names == ["search_history", "session_timeline", "get_record", "verify_record"]

    hits, failed = c.tool("search_history", query=command[:12].upper(), limit=50)
    assert not failed and isinstance(hits, list)
    hit = next(h for h in hits if h["seq"] == call["seq"])
    assert (hit["session_id"], hit["agent"], hit["section"]) == (sid, "codex", "tool_call")
    assert command[:12].lower() in hit["snippet"].lower()
    timeline, failed = c.tool("session_timeline", session_id=sid)
    assert not failed and len(timeline["timeline"]) == len(shown)  # type: ignore[index]
    whole, failed = c.tool("get_record", session_id=sid, seq=call["seq"])
    assert not failed and whole == call
    masked, _ = c.tool("search_history", query="[REDACTED:", limit=200)
    assert len(masked) > 5  # type: ignore[arg-type]
    for kind in SECRETS:  # the planted secrets came through, masked
        assert f"[REDACTED:{kind}:" in json.dumps(whole)

    unchained, failed = c.tool("verify_record", session_id=sid, seq=call["seq"])
    assert failed and "store/all has no chain" in str(unchained)
    missing, failed = c.tool("get_record", session_id=sid, seq=10_000)
    assert failed and "no record 10000" in str(missing)
    assert c.request("no/such")["error"]["code"] == -32601
    assert c.request("tools/call", {"name": "nope"})["error"]["code"] == -32602
    bad = c.request("tools/call", {"name": "search_history", "arguments": {"query": 5}})
    assert bad["error"]["code"] == -32602
    c.send(b"{not json")
    assert c.read()["error"]["code"] == -32700
    assert c.request("ping")["result"] == {}
    code, rest = c.close()
    assert (code, rest) == (0, b"")
    assert leaks(b"".join(c.raw)) == []


def test_without_a_store_a_tool_says_how_to_turn_it_on(install):
    c = Client(install)
    c.request("initialize", {"protocolVersion": "1999-01-01", "capabilities": {}})
    text, failed = c.tool("search_history", query="anything")
    assert failed and "ways settings set ways.sensors.store.enabled true" in str(text)
    assert c.close()[0] == 0


def test_a_record_s_proof_is_what_ways_sensors_verify_accepts(install, tmp_path):
    """With `chain: true` on the store rule, verify_record answers the record with the
    rule's records up to the signed checkpoint covering it: `ways sensors verify --key`
    accepts them, and refuses them once one command in them is changed."""
    for key, value in (("enabled", "true"), ("rules.all.chain", "true")):
        r = install.ways("settings", "set", f"ways.sensors.store.{key}", value)
        assert r.returncode == 0, r.stderr
    sid = play(install, "gemini")
    shown = json.loads(install.ways("sessions", "show", sid, "--json").stdout)["records"]
    call = next(r for r in shown if r["section"] == "tool_call")
    c = Client(install)
    c.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    answer, failed = c.tool("verify_record", session_id=sid, seq=call["seq"])
    assert c.close()[0] == 0
    assert not failed, answer
    assert answer["record"] == call and answer["rule"] == "store/all"  # type: ignore[index]
    proof = tmp_path / "proof.jsonl"
    proof.write_text(answer["proof"])  # type: ignore[index]
    key = json.loads(install.ways("keys", "show", "--json").stdout)["verifier_key"]
    r = install.ways("sensors", "verify", str(proof), "--key", key)
    assert r.returncode == 0 and "intact" in r.stdout, r.stdout + r.stderr
    assert "checkpoint" in r.stdout
    lines = proof.read_text().splitlines()
    i = next(n for n, x in enumerate(lines) if json.loads(x).get("seq") == call["seq"])
    changed = json.loads(lines[i])
    changed["data"]["tool_name"] += "-changed"
    lines[i] = json.dumps(changed)
    proof.write_text("\n".join(lines) + "\n")
    assert install.ways("sensors", "verify", str(proof), "--key", key).returncode == 3
