"""What a command loads at start-up: only what its work needs.

Every `ways` command is a fresh process, so each module it imports is paid on every run
(bench/commands_bench.py measures the commands; bench/RESULTS.md has the numbers).
These tests run the real entry point in a child interpreter and read `sys.modules`
after it returns: `ways sensors verify FILE` reads chained JSON lines and never a sensor
file, so it must not load the spec (msgspec, every target module) or the YAML reader;
a dispatcher with no config.yaml has nothing in YAML to read at all.
"""

from __future__ import annotations

import ast
import json

from .conftest import everything_sensor
from .helpers import SID, dispatcher_lock, lines, play

HEAVY = (
    "yaml",
    "msgspec",
    "ways_sensors.config.spec",
    "ways_sensors.config.layers",
    "_hashlib",
    "hmac",
    "http.client",
    "ways_sensors.evidence.sealer",
    "ssl",
    "genai_prices",
)


def loaded_after(install, argv: list[str]) -> tuple[int, set[str]]:
    """main(argv) in a child interpreter with the install's environment: its exit code
    and the heavy modules it left loaded."""
    code = (
        "import sys; from ways_sensors.cli import main; code = main(%r); "
        "print(code, sorted(m for m in sys.modules if m in %r))" % (argv, HEAVY)
    )
    r = install.python(code)
    assert r.returncode == 0, r.stderr
    exit_code, _, mods = r.stdout.splitlines()[-1].partition(" ")
    return int(exit_code), set(ast.literal_eval(mods))


def test_verify_loads_no_spec_and_no_yaml(install, tmp_path):
    chained = tmp_path / "out.jsonl"
    chained.write_text(json.dumps({"not": "a record"}) + "\n")
    code, mods = loaded_after(install, ["sensors", "verify", str(chained)])
    assert code == 3  # a line that is no record is a break, named; not a crash
    assert mods == set()


def test_a_dispatcher_without_config_yaml_loads_no_yaml(install):
    assert not (install.config_root / "config.yaml").exists()
    code, mods = loaded_after(install, ["sensors", "dispatch", "--", "sid-no-config"])
    assert code == 0
    assert "yaml" not in mods and "ways_sensors.config.layers" not in mods


def test_a_dispatchers_whole_run_without_config_yaml_loads_no_yaml(install, tmp_path):
    """Built, delivered, its metrics ticked and the retention sweep run as it left: the
    rules come from the index the hook compiled, and nothing it reads is YAML."""
    out = tmp_path / "out.jsonl"
    install.sensor("all", everything_sensor(out))
    with dispatcher_lock(install):  # the hook spools; this test runs the dispatcher
        play(install, ["SessionStart", "UserPromptSubmit"])
    code, mods = loaded_after(install, ["sensors", "dispatch", "--idle", "0.3", "--", SID])
    assert code == 0
    assert len(lines(out)) == 2
    assert "yaml" not in mods and "ways_sensors.config.layers" not in mods


def test_a_chained_rules_dispatcher_without_a_witness_loads_no_http_client(install, tmp_path):
    """A chained file rule signs its tree (the sealer runs), but with no witness to ask
    the witness module's network half (http.client, ssl, socket) is never imported; and
    the sealer's settings (cadence, witnesses, epoch) come from a config.yaml that is not
    there, so nor is the YAML reader."""
    out = tmp_path / "out.jsonl"
    install.sensor("all", everything_sensor(out, chain="true"))
    with dispatcher_lock(install):
        play(install, ["SessionStart", "UserPromptSubmit"])
    code, mods = loaded_after(install, ["sensors", "dispatch", "--idle", "0.3", "--", SID])
    assert code == 0
    assert '"checkpoint"' in out.read_text()  # signed
    assert "ways_sensors.evidence.sealer" in mods and "http.client" not in mods
    assert "yaml" not in mods and "ways_sensors.config.layers" not in mods


def test_reading_sensor_files_loads_no_openssl(install, tmp_path):
    """spec.py imports the projection and the traces' ids, which hash only when a record
    is sent: `ways sensors list` hashes nothing, so it never loads OpenSSL (sha.py)."""
    install.sensor("all", everything_sensor(tmp_path / "out.jsonl"))
    code, mods = loaded_after(install, ["sensors", "list"])
    assert code == 0
    assert "ways_sensors.config.spec" in mods and not {"_hashlib", "hmac"} & mods
    assert "ssl" not in mods  # loaded where a TLS context is made (targets/tlsconf.py)


def test_a_session_end_names_the_price_table_without_loading_it(install, tmp_path):
    """Every session_end carries the session's cost with genai-prices' version, priced
    replies or not: a session without any is ended without importing the table."""
    import genai_prices

    out = tmp_path / "out.jsonl"
    install.sensor("all", everything_sensor(out))
    with dispatcher_lock(install):
        play(install, ["SessionStart", "UserPromptSubmit", "SessionEnd"])
    code, mods = loaded_after(install, ["sensors", "dispatch", "--idle", "0.3", "--", SID])
    assert code == 0
    end = [r for r in lines(out) if r["section"] == "session_end"]
    assert end and end[0]["data"]["cost"]["version"] == genai_prices.__version__
    assert "genai_prices" not in mods
