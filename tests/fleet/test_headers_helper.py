"""`headers_helper` through the real hook, dispatcher and a loopback server that takes
only the newest token the helper handed out: asked again when `refresh` is up, so no
stale token is sent; and at once on a 401 when the issuer rotated it, the record still
delivered in the same attempt. Tokens never reach the events log."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ..helpers import counters_of, play, wait_until
from ..servers import Server

# the issuer: each run hands out the next token and makes it the only valid one
HELPER = (
    "import json,sys; p=sys.argv[1]; n=int(open(p).read() or 0)+1; open(p,'w').write(str(n));"
    " print(json.dumps({'authorization': 'Bearer t%d' % n}))"
)


def latest_only(counter: Path):
    def gate(headers: dict[str, str]) -> int:
        return 200 if headers.get("authorization") == f"Bearer t{counter.read_text()}" else 401

    return gate


def setup(install, tmp_path, refresh: str) -> tuple[Server, Path]:
    counter = tmp_path / "issued"
    counter.write_text("0")
    server = Server("accept", gate=latest_only(counter))
    argv = f'["{sys.executable}", "-c", "{HELPER}", "{counter}"]'
    install.sensor(
        "h",
        f"""
        rules:
          r:
            sections: [user_prompt]
            delivery: at_least_once
            dispatch:
              http:
                url: "{server.url}"
                headers_helper: {{argv: {argv}, refresh: {refresh}}}
        """,
    )
    return server, counter


def test_refreshed_before_it_goes_stale(install, tmp_path):
    server, counter = setup(install, tmp_path, "1s")
    try:
        for _ in range(5):
            play(install, ["UserPromptSubmit"])
            time.sleep(1.2)
        assert len(server.wait_for(5)) == 5
        assert [a[1] for a in server.attempts] == [200] * 5  # not one stale token sent
        tokens = {h["authorization"] for h in server.headers}
        assert len(tokens) >= 3 and int(counter.read_text()) == len(tokens)
        log = install.state_root / "events.log"
        assert not log.exists() or "Bearer" not in log.read_text()
    finally:
        server.close()


def test_a_401_asks_again_at_once(install, tmp_path):
    server, counter = setup(install, tmp_path, "10m")
    try:
        play(install, ["UserPromptSubmit"])
        assert len(server.wait_for(1)) == 1
        counter.write_text(str(int(counter.read_text()) + 1))  # the issuer rotated it
        play(install, ["UserPromptSubmit"])
        assert len(server.wait_for(2)) == 2
        assert [a[1] for a in server.attempts] == [200, 401, 200]
        assert wait_until(lambda: counters_of(install, "h/r")["delivered"] == 2)
        assert counters_of(install, "h/r")["retries"] == 0  # answered within the attempt
    finally:
        server.close()
