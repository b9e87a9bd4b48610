"""`ways sensors lint` refuses a format a rule's target cannot carry, in one line that
says where the format goes (targets/<kind>.py `FORMATS`, targets.uncarried)."""

from __future__ import annotations

import json

CARRIED = """\
rules:
  spans:
    sections: [tool_call]
    dispatch:
      otlp: {endpoint: "http://127.0.0.1:4318", format: ocsf}
  proto:
    sections: [tool_call]
    dispatch:
      file: {path: /tmp/x.jsonl, format: otlp-protobuf}
  ok:
    sections: [tool_call]
    dispatch:
      file: {path: /tmp/x.jsonl, format: ocsf}
  logs:
    sections: [tool_call]
    dispatch:
      otlp: {endpoint: "http://127.0.0.1:4318", encoding: json}
  traces:
    sections: [tool_call]
    dispatch:
      otlp: {endpoint: "http://127.0.0.1:4318", signal: traces, encoding: protobuf}
"""


def test_a_format_the_target_cannot_carry_is_one_error_naming_where_it_goes(install, tmp_path):
    path = tmp_path / "carried.yaml"
    path.write_text(CARRIED)
    r = install.ways("sensors", "lint", str(path))
    assert r.returncode == 3, r.stdout + r.stderr
    errors = [ln for ln in r.stdout.splitlines() if ": error: " in ln]
    assert errors == [
        f"{path}:5:57: error: carried/spans: the otlp target cannot carry ocsf: it carries "
        "otlp_json or otlp_protobuf (`encoding: json or protobuf`); ocsf goes by file, "
        "http, command or syslog (`file: {format: ocsf, ...}`)",
        f"{path}:9:42: error: carried/proto: the file target cannot carry otlp_protobuf: it "
        "carries `format: json, text, ocsf or ecs`; otlp_protobuf goes by otlp (`otlp: "
        "{encoding: protobuf, ...}`)",
    ], r.stdout
    data = json.loads(install.ways("sensors", "lint", "--json", str(path)).stdout)
    assert [(e["line"], e["column"]) for e in data["errors"]] == [(5, 57), (9, 42)]


def test_a_word_that_names_no_format_keeps_the_fields_own_message(install, tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text(
        "rules:\n  a:\n    sections: [tool_call]\n"
        "    dispatch: {file: {path: /tmp/x, format: osfc}}\n"
    )
    r = install.ways("sensors", "lint", str(path))
    assert r.returncode == 3
    assert "`osfc` is not a valid format: use one of json, text, ocsf, ecs" in r.stdout
