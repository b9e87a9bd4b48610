"""A real Arize Phoenix server for the end-to-end suite: `arize-phoenix` from PyPI at a
pinned version, installed once into its own virtual environment, `<repo>/.e2e/phoenix`
(or $WAYS_PHOENIX_DIR), so the project's own environment stays as it is; started on
loopback on ephemeral ports (HTTP and gRPC) in a throwaway working folder (its SQLite
database, its log), with its telemetry off; stopped with its process group.

Phoenix's OTLP/HTTP receiver (`/v1/traces`) takes protobuf only (it answers JSON with
415). Its REST API gives back what it stored: `GET /v1/projects/default/spans/otlpv1`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

VERSION = "20.26.1"
REPO = Path(__file__).resolve().parent.parent.parent
READY = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


def phoenix_bin() -> str:
    """The pinned server's `phoenix` command, installed with pip on first use."""
    folder = Path(os.environ.get("WAYS_PHOENIX_DIR", REPO / ".e2e" / "phoenix"))
    exe = folder / "bin" / "phoenix"
    if exe.exists():
        return str(exe)
    folder.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=300)
    r = subprocess.run(
        [str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet",
         "--disable-pip-version-check", f"arize-phoenix=={VERSION}"],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    if r.returncode != 0 or not exe.exists():
        raise RuntimeError(f"pip could not install arize-phoenix=={VERSION}: {r.stderr[-1000:]}")
    return str(exe)


class Phoenix:
    """One running server; `url` is its HTTP root (OTLP at url + /v1/traces)."""

    def __init__(self, workdir: Path, timeout: float = 300):
        workdir.mkdir(parents=True, exist_ok=True)
        self.log = workdir / "phoenix.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
        env.update(
            PHOENIX_WORKING_DIR=str(workdir),
            PHOENIX_HOST="127.0.0.1",
            PHOENIX_PORT="0",
            PHOENIX_GRPC_PORT="0",
            PHOENIX_TELEMETRY_ENABLED="false",
        )
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [phoenix_bin(), "serve"],
                cwd=workdir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = READY.search(self.log.read_text(errors="replace"))
            if found:
                self.url = f"http://127.0.0.1:{found.group(1)}"
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.5)
        self.stop()
        raise RuntimeError("Phoenix did not start: " + self.log.read_text(errors="replace")[-2000:])

    def sensor(self, client_root: Path, sections: str) -> None:
        """The client's sensor sending `sections` here as chained GenAI spans, at least
        once, in protobuf (the only encoding Phoenix's receiver takes)."""
        (client_root / "config" / "agent-ways" / "sensors" / "phoenix.yaml").write_text(
            "rules:\n  spans:\n"
            f"    sections: [{sections}]\n"
            "    delivery: at_least_once\n    chain: true\n"
            f"    dispatch: {{otlp: {{endpoint: '{self.url}', signal: traces,"
            " encoding: protobuf}}\n"
        )

    def spans(self, project: str = "default") -> list[dict[str, Any]]:
        """Every span Phoenix stored in `project`, through its REST API (paged)."""
        out: list[dict[str, Any]] = []
        cursor = ""
        while True:
            query = "limit=1000" + (f"&cursor={cursor}" if cursor else "")
            url = f"{self.url}/v1/projects/{project}/spans/otlpv1?{query}"
            try:
                with urllib.request.urlopen(url, timeout=30) as r:
                    page = json.loads(r.read())
            except urllib.error.HTTPError as exc:
                if exc.code == 404:  # no span yet: the project is made at the first
                    return []
                raise
            out += page.get("data") or []
            cursor = page.get("next_cursor") or ""
            if not cursor:
                return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)


def attrs(span: dict[str, Any]) -> dict[str, Any]:
    """A span's attributes as {key: value} (Phoenix writes every AnyValue kind, unset ones
    as null)."""
    out = {}
    for kv in span.get("attributes") or []:
        value = kv.get("value") or {}
        got = [v for v in value.values() if v is not None]
        out[kv["key"]] = got[0] if got else None
    return out
