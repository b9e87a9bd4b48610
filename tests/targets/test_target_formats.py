"""`format:` on the file, command and http targets: each writes what formats/ makes,
for real (a file on disk, a real command's stdin, a loopback HTTP server)."""

from __future__ import annotations

import json
import time

from ways_sensors.targets import Context, Item, command, file, http

from ..formats import samples
from ..servers import Server

CTX = Context("s", "r")  # one record per attempt
BATCHED = Context("s", "r", max_records=64)
RECORDS = samples.records()
BATCH = [Item(r, line) for r, line in zip(RECORDS, samples.lines(RECORDS), strict=True)]


def test_file_writes_one_ocsf_event_per_line(tmp_path):
    spec = file.FileTarget(path=str(tmp_path / "ocsf.jsonl"), format="ocsf")
    assert file.deliver(spec, BATCH, CTX, time.monotonic() + 5).accepted
    events = [json.loads(x) for x in (tmp_path / "ocsf.jsonl").read_text().splitlines()]
    assert [json.loads(e["raw_data"]) for e in events] == RECORDS
    assert all(samples.ocsf_errors(e) == [] for e in events)


def test_command_reads_ecs_documents_on_stdin(tmp_path):
    out = tmp_path / "ecs.jsonl"
    spec = command.CommandTarget(argv=["sh", "-c", f"cat >> '{out}'"], format="ecs")
    assert command.deliver(spec, BATCH, CTX, time.monotonic() + 10).accepted
    docs = [json.loads(x) for x in out.read_text().splitlines()]
    assert [d["ways"] for d in docs] == RECORDS
    assert all(d["ecs"]["version"] and d["event"]["kind"] == "event" for d in docs)


def test_http_posts_ocsf_events_as_an_array_when_batched_and_alone_when_not():
    server = Server("accept")
    try:
        spec = http.HttpTarget(url=server.url, format="ocsf")
        assert http.deliver(spec, BATCH, BATCHED, time.monotonic() + 5).accepted
        assert http.deliver(spec, BATCH[:1], CTX, time.monotonic() + 5).accepted
        batched, alone = server.bodies
        assert isinstance(batched, list) and len(batched) == len(RECORDS)
        assert all(samples.ocsf_errors(e) == [] for e in batched)
        assert alone == batched[0]
    finally:
        server.close()
