"""The Prometheus textfile: written by the real detached dispatcher while it runs and
as it exits, parsed with Prometheus' own text parser; `ways status --prometheus`; the
`ways.metrics_textfile` setting."""

from __future__ import annotations

import json
import stat

from prometheus_client.parser import text_string_to_metric_families

from ways_sensors.state import counters

from .helpers import counters_of, dispatcher_alive, dispatcher_done, wait_until
from .servers import Server
from .sessions import EXPECTED, SID, TOTAL, ScriptedSession


def families(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def gauge(text: str, name: str) -> float | None:
    fam = families(text).get(name)
    return fam.samples[0].value if fam and fam.samples else None


def read(path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def sensor(install, out, server: Server) -> None:
    install.sensor(
        "metered",
        f"""\
        rules:
          all:
            sections: [{", ".join(EXPECTED)}]
            delivery: at_least_once
            dispatch: {{file: {{path: '{out}'}}}}
          remote:
            sections: [user_prompt]
            delivery: at_least_once
            dispatch: {{http: {{url: '{server.url}'}}}}
        """,
    )


def test_the_dispatcher_keeps_the_textfile_while_it_runs_and_as_it_exits(install, tmp_path):
    prom = tmp_path / "textfile"
    prom.mkdir()
    path = prom / "ways.prom"
    install.config(f"ways:\n  metrics_textfile: {path}\n")
    server = Server("script", script=[(400, {})])  # the first prompt is refused for good
    try:
        sensor(install, tmp_path / "out.jsonl", server)
        session = ScriptedSession(install, tmp_path / "t")
        session.play(end=False)
        # written from the dispatcher's main loop while it is alive
        assert wait_until(lambda: gauge(read(path), "ways_sensors_dispatchers") == 1)
        assert dispatcher_alive(install, SID)
        session.hook("SessionEnd", reason="other")
        assert wait_until(lambda: dispatcher_done(install, SID))
        # and once more as it exits, after letting go of its lock
        assert wait_until(lambda: gauge(read(path), "ways_sensors_dispatchers") == 0)
        text = path.read_text()
    finally:
        server.close()

    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert sorted(p.name for p in prom.iterdir()) == ["ways.prom"]  # no temporary left
    assert SID not in text

    fams = families(text)
    for kind in counters.KINDS:
        fam = fams[f"ways_sensors_{kind}"]  # the parser drops a counter's _total
        assert fam.type == "counter" and fam.documentation
        for s in fam.samples:
            assert s.name == f"ways_sensors_{kind}_total"
            assert set(s.labels) == {"sensor", "rule"} and s.timestamp is None
    for rule in ("all", "remote"):
        want = counters_of(install, f"metered/{rule}")
        got = {
            kind: next(
                s.value
                for s in fams[f"ways_sensors_{kind}"].samples
                if s.labels == {"sensor": "metered", "rule": rule}
            )
            for kind in counters.KINDS
        }
        assert got == want
    assert counters_of(install, "metered/all")["delivered"] == TOTAL
    assert counters_of(install, "metered/remote")["rejected"] == 1
    [dead] = fams["ways_sensors_dead_letters"].samples
    assert (dead.labels, dead.value) == ({"sensor": "metered", "rule": "remote"}, 1)
    assert fams["ways_sensors_dead_letters"].type == "gauge"
    assert gauge(text, "ways_sensors_pending_sessions") == 0

    lines = text.splitlines()
    typed = [line.split()[2] for line in lines if line.startswith("# TYPE ")]
    helped = [line.split()[2] for line in lines if line.startswith("# HELP ")]
    # 3 gauges, dead letters, and the health marks' 3 (metrics.HEALTH_GAUGES)
    assert typed == helped and len(typed) == len(counters.KINDS) + 4 + 3
    assert gauge(text, "ways_sensors_refused_files") == 0
    last = fams["ways_sensors_last_delivery_timestamp_seconds"].samples
    assert any(x.labels == {"sensor": "metered", "rule": "all"} and x.value > 0 for x in last)

    # `ways status --prometheus` prints the same text, then the records owed it counted
    r = install.ways("status", "--prometheus")
    assert r.returncode == 0 and r.stdout.startswith(text)
    more = [x.split()[2] for x in r.stdout[len(text) :].splitlines() if x.startswith("# TYPE")]
    assert more == ["ways_sensors_owed_records", "ways_sensors_oldest_owed_age_seconds"]


def test_a_textfile_that_cannot_be_written_is_logged_once_and_delivery_goes_on(install, tmp_path):
    install.config(f"ways:\n  metrics_textfile: {tmp_path}/no-such-folder/ways.prom\n")
    server = Server("accept")
    try:
        sensor(install, tmp_path / "out.jsonl", server)
        ScriptedSession(install, tmp_path / "t").play()
        assert wait_until(lambda: dispatcher_done(install, SID))
        assert counters_of(install, "metered/all")["delivered"] == TOTAL
    finally:
        server.close()
    log = [json.loads(x) for x in (install.state_root / "events.log").read_text().splitlines()]
    failed = [e for e in log if e["kind"] == "metrics.write_failed"]
    assert len(failed) == 1 and failed[0]["error"] == "FileNotFoundError"
    assert not (tmp_path / "no-such-folder").exists()  # never created


def test_status_prometheus_on_a_fresh_install_parses(install):
    r = install.ways("status", "--prometheus")
    assert r.returncode == 0
    fams = families(r.stdout)
    assert fams["ways_sensors_delivered"].samples == []
    assert gauge(r.stdout, "ways_sensors_dispatchers") == 0


def test_the_setting_lives_in_the_user_config(install, tmp_path):
    target = str(tmp_path / "ways.prom")
    r = install.ways("settings", "set", "ways.metrics_textfile", target)
    assert r.returncode == 0, r.stderr
    assert "metrics_textfile: " + target in (install.config_root / "config.yaml").read_text()
    got = json.loads(install.ways("settings", "get", "ways.metrics_textfile", "--json").stdout)
    assert (got["value"], got["layer"]) == (target, "user")
    r = install.ways("settings", "set", "ways.metrics_textfile", "relative.prom")
    assert r.returncode == 3 and "absolute" in r.stderr
    r = install.ways("settings", "set", "ways.metrics_textfile", target, "--project", ".")
    assert r.returncode != 0 and "user config.yaml only" in r.stderr
    assert install.ways("settings", "unset", "ways.metrics_textfile").returncode == 0
    got = json.loads(install.ways("settings", "get", "ways.metrics_textfile", "--json").stdout)
    assert (got["value"], got["layer"]) == (None, "default")


def _refusals(install) -> list[dict]:
    log = install.state_root / "events.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [e for e in map(json.loads, lines) if e["kind"] == "metrics.write_failed"]


def test_the_textfile_never_replaces_a_file_that_is_not_its_own(install, tmp_path):
    """Pointed at config.yaml, the redaction key, someone's notes or a link, the real
    dispatcher leaves each as it was and logs why; a textfile of ours is still rewritten."""
    server = Server("accept")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    link = tmp_path / "link.prom"
    link.symlink_to(notes)
    ours = tmp_path / "ours.prom"
    ours.write_text("# HELP ways_sensors_dispatched_total old\n")
    install.config("")
    key = install.state_root / "redaction.key"
    cases = [
        (install.config_root / "config.yaml", "inside_config_root"),
        (key, "inside_state_root"),
        (notes, "not_a_metrics_file"),
        (link, "not_a_regular_file"),
    ]
    try:
        sensor(install, tmp_path / "out.jsonl", server)
        for n, (path, reason) in enumerate(cases):
            cfg = install.config(f"ways:\n  metrics_textfile: {path}\n")
            before = path.read_bytes() if path.exists() else None
            sid = f"refused-{n}"
            ScriptedSession(install, tmp_path / f"t{n}", sid=sid).play()
            assert wait_until(lambda sid=sid: not dispatcher_alive(install, sid))
            assert [e.get("reason") for e in _refusals(install)][-1] == reason
            if before is not None:
                assert path.read_bytes() == before
            assert cfg.read_text() == f"ways:\n  metrics_textfile: {path}\n"
            assert link.is_symlink() and notes.read_text() == "my notes\n"
        assert key.exists()  # the session made it; the textfile never replaced it
        assert key.read_bytes() != b"" and not key.read_bytes().startswith(b"# HELP")

        # the same install still keeps a textfile that is its own
        install.config(f"ways:\n  metrics_textfile: {ours}\n")
        ScriptedSession(install, tmp_path / "t-ours", sid="ours").play()
        assert wait_until(lambda: gauge(read(ours), "ways_sensors_pending_sessions") == 0)
    finally:
        server.close()
    assert "ways_sensors_delivered_total" in ours.read_text()


def test_setting_the_textfile_to_a_file_it_would_destroy_is_refused(install, tmp_path):
    install.config("")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    for path in (install.config_root / "config.yaml", install.state_root / "x.prom", notes):
        r = install.ways("settings", "set", "ways.metrics_textfile", str(path))
        assert r.returncode == 3 and "would replace" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) <= 2
    assert "metrics_textfile" not in (install.config_root / "config.yaml").read_text()
    assert notes.read_text() == "my notes\n"
