"""The relay tier for tests and the bench: rsyslogd processes run from the reference
configurations in docs/fleet/ (RELP), or from their plain-TCP equivalents below, and the
chaos run of issue 37: four sessions streamed through the real dispatchers to the relay
while the relay and the central server are each SIGKILLed and restarted at random."""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ways_sensors.state import spool

from .conftest import REPO, payload
from .rsyslog import Rsyslog

DOCS = REPO / "docs" / "fleet"

# the same tier over plain TCP syslog (RFC 6587 octet counting): no acknowledgement
# anywhere, so what a killed process had read but not yet stored is gone unseen
RELAY_TCP = """
global(workDirectory="@WORK@" maxMessageSize="4m")
module(load="imtcp")
ruleset(name="ways-relay" queue.type="Direct") {
  action(type="omfwd" target="@CENTRAL_HOST@" port="@CENTRAL_PORT@" protocol="tcp"
         TCP_Framing="octet-counted"
         queue.type="Disk" queue.filename="to-central" queue.maxDiskSpace="8g"
         queue.checkpointInterval="1" queue.syncQueueFiles="on" queue.saveOnShutdown="on"
         action.resumeRetryCount="-1" action.resumeInterval="1")
}
input(type="imtcp" address="@ADDRESS@" port="@PORT@" ruleset="ways-relay")
"""
CENTRAL_TCP = """
global(workDirectory="@WORK@" maxMessageSize="4m")
module(load="imtcp")
template(name="ways-record" type="string" string="%msg%\\n")
ruleset(name="ways-central" queue.type="Direct") {
  action(type="omfile" file="@FILE@" template="ways-record" asyncWriting="off"
         flushOnTXEnd="on")
}
input(type="imtcp" address="@ADDRESS@" port="@PORT@" ruleset="ways-central")
"""


class Node(Rsyslog):
    """One rsyslogd of the tier, from a configuration with @NAME@ placeholders."""

    def __init__(self, folder: Path, conf: str, **fill: Any):
        self.template, self.fill = conf, fill
        super().__init__(folder, "relp")  # relp: a free port of ours, no port file

    def _config(self) -> str:
        text = self.template
        values = {"WORK": self.work, "ADDRESS": "127.0.0.1", "PORT": self.port, **self.fill}
        values.setdefault("FILE", self.out)
        for k, v in values.items():
            text = text.replace(f"@{k}@", str(v))
        return text

    def records(self) -> list[dict[str, Any]]:
        """The central file's records, read as verify reads them: a record after the
        torn end of a line a killed rsyslogd left unfinished still counts."""
        out = []
        if self.out.exists():
            for line in self.out.read_text(errors="replace").splitlines():
                at = line.rfind('{"schema":"ways.sensor.')
                try:
                    out.append(json.loads(line[max(at, 0) :]))
                except ValueError:
                    continue
        return out


# the relay with a queue on disk (disk-assisted forwarding, as issue 37 first asked),
# measured beside the reference one in bench/RESULTS.md
RELAY_DISK = (
    (DOCS / "rsyslog-relay.conf")
    .read_text()
    .replace(
        'windowSize="2"',
        'queue.type="Disk" queue.filename="to-central" queue.maxDiskSpace="8g"\n'
        '         queue.checkpointInterval="1" queue.syncQueueFiles="on" queue.saveOnShutdown="on"',
    )
)


def tier(folder: Path, protocol: str) -> tuple[Node, Node]:
    """(relay, central), both running: the docs' RELP pair (`relp`), the same with a
    relay queue on disk (`relp-disk`), or the plain-TCP one (`tcp`)."""
    relp = protocol.startswith("relp")
    central_conf = (DOCS / "rsyslog-central.conf").read_text() if relp else CENTRAL_TCP
    central = Node(folder / "central", central_conf)
    relay_conf = (DOCS / "rsyslog-relay.conf").read_text() if relp else RELAY_TCP
    if protocol == "relp-disk":
        relay_conf = RELAY_DISK
    relay = Node(folder / "relay", relay_conf, CENTRAL_HOST="127.0.0.1", CENTRAL_PORT=central.port)
    return relay, central


@dataclass
class Chaos:
    """Kills and restarts each node `kills` times at random moments, until stopped."""

    nodes: list[Node]
    kills: int
    span: float  # seconds over which the kills are spread
    seed: int = 37
    done: dict[str, int] = field(default_factory=dict)

    def run(self, stop: threading.Event) -> None:
        rng = random.Random(self.seed)
        moments: list[tuple[float, int]] = []
        for i in range(len(self.nodes)):
            moments += [(rng.uniform(0, self.span), i) for _ in range(self.kills)]
        plan = sorted(moments)
        start = time.monotonic()
        for at, i in plan:
            if stop.wait(max(0.0, start + at - time.monotonic())):
                return
            node = self.nodes[i]
            node.kill()
            time.sleep(rng.uniform(0.05, 0.5))  # down for a moment: senders retry
            node.start()
            self.done[node.folder.name] = self.done.get(node.folder.name, 0) + 1


def feed(
    install: Any, sids: list[str], per_session: int, step: int, pause: float, started: Any
) -> None:
    """Spool SessionStart, `per_session` prompts (in steps of `step`, `pause` apart) and
    SessionEnd for each session, with the hook's own spool writer; `started()` once the
    sessions exist (to start their dispatchers)."""
    project = str(install.project)

    def put(sid: str, name: str, **extra: Any) -> None:
        body = json.dumps({**payload(name), "session_id": sid, **extra}).encode()
        spool.append(sid, name, time.time_ns(), project, body, layout=install.layout)

    for sid in sids:
        put(sid, "SessionStart")
    started()
    for first in range(0, per_session, step):
        for sid in sids:
            for n in range(first, min(first + step, per_session)):
                put(sid, "UserPromptSubmit", prompt=f"prompt {n} of {sid[:8]}")
        time.sleep(pause)
    for sid in sids:
        put(sid, "SessionEnd")


def dispatch(install: Any, sid: str) -> Any:
    import subprocess
    import sys

    return subprocess.Popen(
        [str(Path(sys.executable).parent / "ways"), "sensors", "dispatch", "--session", sid],
        env=install.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


STALL = 30.0  # seconds without a new line at the central file: the drain is over
SIDS = [f"{n}{n}{n}{n}{n}{n}{n}{n}-3737-4737-8737-{n * 12}" for n in "1234"]


def run_tier(
    install: Any, folder: Path, protocol: str, per_session: int = 2500, kills: int = 20
) -> dict[str, Any]:
    """The chaos run: 4 sessions of `per_session` chained records each through the real
    dispatchers to the relay, `kills` SIGKILLs of each node; then everything drained and
    the central file verified. Returns what was sent, seen and verified."""
    relay, central = tier(folder, protocol)
    wire = "relp" if protocol.startswith("relp") else protocol
    # through the one relay, its omrelp windowSize (2) of flush messages (targets/relp.py)
    flush = ", relay_flush: 2" if wire == "relp" else ""
    install.sensor(
        "fleet",
        f"""
        rules:
          tier:
            sections: [user_prompt]
            delivery: at_least_once
            chain: true
            timeout: 10s
            dispatch: {{syslog: {{host: 127.0.0.1, port: {relay.port}, protocol: {wire}{flush}}}}}
        """,
    )
    install.config("ways:\n  dispatch_idle_seconds: 300\n")
    procs: list[Any] = []
    stop = threading.Event()
    chaos = Chaos([relay, central], kills, span=max(10.0, per_session / 100))
    killer = threading.Thread(target=chaos.run, args=(stop,), daemon=True)
    started = time.monotonic()
    try:

        def begin() -> None:
            procs.extend(dispatch(install, sid) for sid in SIDS)
            killer.start()

        feed(install, SIDS, per_session, 25, 0.1, begin)
        killer.join()  # every kill done (each node restarted after its kill)
        for p in procs:
            p.wait(timeout=900)
        want = len(SIDS) * per_session
        # every dispatcher has left: what the relay still holds (tcp and relp-disk queue
        # it) drains on; once the central file has not grown for STALL seconds, what is
        # not there is lost (a fixed wait took a slow drain for loss)
        end = time.monotonic() + 600
        size, grew = -1, time.monotonic()
        recs: list[dict[str, Any]] = []
        seen: set[tuple[str, int]] = set()
        while time.monotonic() < end:
            recs = [r for r in central.records() if r.get("section") == "user_prompt"]
            seen = {(r["session_id"], r["rule_seq"]) for r in recs}
            if len(seen) >= want:
                break
            now_size = central.out.stat().st_size if central.out.exists() else 0
            if now_size != size:
                size, grew = now_size, time.monotonic()
            elif time.monotonic() - grew > STALL:
                break
            time.sleep(1)
        r = install.ways(
            "sensors", "verify", str(central.out), "--key", root_vkey(install), "--json"
        )
        return {
            "protocol": protocol,
            "sent": want,
            "received": len(recs),
            "distinct": len(seen),
            "missing": want - len(seen),
            "duplicates": len(recs) - len(seen),
            "kills": dict(chaos.done),
            "seconds": round(time.monotonic() - started, 1),
            "verify_code": r.returncode,
            "verify": r.stdout,
            "file": central.out,
        }
    finally:
        stop.set()
        for p in procs:
            if p.poll() is None:
                p.kill()
        relay.close()
        central.close()


def root_vkey(install: Any) -> str:
    r = install.ways("keys", "show", "--json")
    return str(json.loads(r.stdout)["verifier_key"])
