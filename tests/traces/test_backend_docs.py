"""The backend configurations for traces in docs/otlp.md (Langfuse, Datadog, Honeycomb,
Phoenix) are sensor files `ways sensors lint` accepts, each a traces rule in protobuf,
once the sections the page says to add are added."""

from __future__ import annotations

import yaml

from ..conftest import REPO


def backends() -> dict:
    text = (REPO / "docs" / "otlp.md").read_text()
    after = text[text.index("**Backends.**") :]
    return yaml.safe_load(after.split("```yaml\n", 1)[1].split("```", 1)[0])["rules"]


def test_every_backend_configuration_lints_clean(install, tmp_path):
    rules = backends()
    assert set(rules) == {"langfuse", "datadog", "honeycomb", "phoenix"}
    for name, rule in rules.items():
        otlp = rule["dispatch"]["otlp"]
        assert (otlp["signal"], otlp["encoding"]) == ("traces", "protobuf"), name
        rule.update(sections=["session_start", "tool_call", "tool_result",
                              "assistant_response", "session_end"],
                    delivery="at_least_once", chain=True)  # fmt: skip
    path = tmp_path / "backends.yaml"
    path.write_text(yaml.safe_dump({"rules": rules}))
    r = install.ways("sensors", "lint", str(path))
    assert r.returncode == 0, r.stdout + r.stderr
