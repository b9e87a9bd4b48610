"""No corpus secret reaches any consumer through the real hook and dispatcher, unless
the rule says `redact: none`: the whole labelled corpus, held-out cases included, three
cases to a prompt or a tool call."""

from __future__ import annotations

import json
import sys

import pytest

from ways_sensors import redact

from .conftest import payload
from .helpers import SID, load_corpus, wait_until
from .servers import Server

BATCH = 3


def strings(value) -> str:
    """Every string inside a decoded JSON value, joined by NUL."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return "\0".join(strings(v) for v in value)
    return ""


@pytest.mark.slow  # about 50 s: the whole corpus through the real hook and dispatcher
def test_no_corpus_secret_reaches_a_consumer(install, tmp_path, monkeypatch):
    secrets = load_corpus()[0]
    # the pipeline must mask on every path what the scan masks (the corpus test holds the
    # scan to its recall floor): here, every secret the scan finds in its own case
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "scan-state"))
    caught = [r for r in secrets if r["secret"] not in redact.mask_text(r["text"])[0]]
    assert len(caught) >= 0.97 * len(secrets)
    batches = [secrets[i : i + BATCH] for i in range(0, len(secrets), BATCH)]
    server = Server("accept")
    try:
        out = tmp_path / "out"
        out.mkdir()
        append = f"import sys; open('{out}/cmd.jsonl','a').write(sys.stdin.read())"
        install.sensor(
            "leaky",
            f"""\
            rules:
              file:
                sections: [user_prompt, tool_call, tool_result]
                dispatch: {{file: {{path: '{out}/file.jsonl'}}}}
              http:
                sections: [user_prompt, tool_call, tool_result]
                dispatch: {{http: {{url: '{server.url}'}}}}
              command:
                sections: [user_prompt, tool_call, tool_result]
                dispatch: {{command: {{argv: [{sys.executable}, -c, "{append}"]}}}}
              blocking:
                sections: [tool_call]
                mode: blocking
                dispatch: {{file: {{path: '{out}/blocking.jsonl'}}}}
              raw:
                sections: [user_prompt, tool_call, tool_result]
                redact: none
                dispatch: {{file: {{path: '{out}/raw.jsonl'}}}}
            """,
        )
        # half the batches as prompts, half as a tool call and its result
        for i, batch in enumerate(batches):
            text = "\n\n".join(r["text"] for r in batch)
            if i % 2:
                install.hook({**payload("UserPromptSubmit"), "prompt": text})
            else:
                install.hook({**payload("PreToolUse"), "tool_input": {"command": text}})
                install.hook({**payload("PostToolUse"), "tool_response": {"stdout": text}})
        install.hook(payload("SessionEnd"))
        assert wait_until(lambda: not (install.sessions() / SID).exists(), timeout=120)
        received = {
            "file": (out / "file.jsonl").read_text(),
            "http": "\n".join(json.dumps(b) for b in server.bodies),
            "command": (out / "cmd.jsonl").read_text(),
            "blocking": (out / "blocking.jsonl").read_text(),
        }
        n_prompts = len(batches) // 2
        assert received["file"].count("\n") == n_prompts + 2 * (len(batches) - n_prompts)
        for name, text in received.items():
            decoded = (
                server.bodies
                if name == "http"
                else [json.loads(x) for x in text.splitlines() if x.strip()]
            )
            flat = strings(decoded)  # decoded: a PEM block's newlines are real newlines
            leaked = [r["kind"] for r in caught if r["secret"] in flat]
            assert not leaked, f"{name} received secrets of kinds {sorted(set(leaked))}"
            assert "[REDACTED:" in flat
        raw = strings([json.loads(x) for x in (out / "raw.jsonl").read_text().splitlines()])
        assert all(r["secret"] in raw for r in secrets)  # redact: none is byte-complete
    finally:
        server.close()
