"""Dispatcher memory against a hostile HTTP consumer: a 1 GiB response body.

A throwaway install with one http rule (`tool_call`, best_effort) whose server answers
every request `200` with a Content-Length of SIZE bytes and streams that many (or until
the client closes). One PreToolUse is spooled and a real dispatcher started on it. The
dispatcher's RSS is sampled every 10 ms from its start until the attempt is over (the
record counted delivered, or SIZE bytes sent); its peak is reported beside the peak of
the same dispatcher against a server answering with an empty body, and the bytes the
server got out before the client closed. The http target reads at most BODY_CAP bytes
of a body, then closes the connection.

Usage: python bench/memory_bench.py [--size BYTES]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import fixture_env

REPO = Path(__file__).resolve().parent.parent
FIXTURE = sorted((REPO / "tests" / "fixtures").glob("claude-code-*/payloads/PreToolUse.json"))[-1]
PAYLOAD = json.loads(FIXTURE.read_text())


class Flood:
    """Answers each request 200 with a body of `size` bytes, sent in 64 KiB chunks."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.sent = 0
        self.done = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/in"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {self.size}\r\n\r\n".encode())
        chunk = b"x" * 65536
        try:
            while self.sent < self.size:
                n = min(len(chunk), self.size - self.sent)
                conn.sendall(chunk[:n])
                self.sent += n
        except OSError:
            pass  # the client closed the connection: the rest is never sent
        finally:
            conn.close()
            self.done.set()


def delivered(state: Path) -> int:
    try:
        return int(json.loads((state / "counters" / "bench.big.json").read_text())["delivered"])
    except (OSError, ValueError, KeyError):
        return 0


def peak_rss(size: int) -> tuple[float, int, float]:
    """(peak RSS MiB, bytes the server sent, seconds) of one dispatch against a server
    answering `size` bytes."""
    flood = Flood(size)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = fixture_env(root)
        cfg = root / "config" / "agent-ways"
        (cfg / "config.yaml").write_text("ways:\n  dispatch_idle_seconds: 600\n")
        (cfg / "sensors" / "bench.yaml").write_text(
            "rules:\n  big:\n    sections: [tool_call]\n    timeout: 60s\n"
            f"    dispatch: {{http: {{url: '{flood.url}'}}}}\n"
        )
        sid = "bench-memory"
        emit = (
            "import sys, time; from ways_sensors.state import spool; "
            "spool.append(sys.argv[1], 'PreToolUse', time.time_ns(), sys.argv[2], "
            "sys.argv[3].encode())"
        )
        body = json.dumps({**PAYLOAD, "session_id": sid})
        subprocess.run(
            [sys.executable, "-c", emit, sid, env["CLAUDE_PROJECT_DIR"], body], env=env, check=True
        )
        ways = str(Path(sys.executable).parent / "ways")
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [ways, "sensors", "dispatch", "--session", sid],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        ps = psutil.Process(proc.pid)
        peak = 0.0
        state = root / "state" / "agent-ways"
        try:
            while not (flood.done.is_set() and delivered(state)):
                if time.perf_counter() - t0 > 120:
                    raise SystemExit("the attempt did not end in 120 s")
                peak = max(peak, ps.memory_info().rss / 2**20)
                time.sleep(0.01)
        finally:
            took = time.perf_counter() - t0
            proc.kill()
            proc.wait()
            flood.sock.close()
    return peak, flood.sent, took


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1 << 30)
    args = ap.parse_args()
    base, _, _ = peak_rss(0)
    peak, sent, took = peak_rss(args.size)
    print(f"dispatcher memory, python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print()
    print("| figure | value |")
    print("|---|---:|")
    print(f"| dispatcher peak RSS, empty response | {base:.1f} MiB |")
    print(f"| dispatcher peak RSS, {args.size / 2**30:g} GiB response | {peak:.1f} MiB |")
    print(f"| bytes the server got out before the client closed | {sent:,} |")
    print(f"| from dispatcher start to the attempt settled | {took:.2f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
