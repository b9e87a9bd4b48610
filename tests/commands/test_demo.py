"""`ways demo`: the README's main job, as a real command."""

from __future__ import annotations

import os
import re


def test_demo_shows_records_arriving_at_every_consumer(install):
    r = install.ways("demo", timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert out.count("exit 0  stdout 0 bytes") == 16  # every hook: silent, exit 0
    counts = dict(re.findall(r"^(file|http|command) consumer .*?: (\d+) records$", out, re.M))
    assert int(counts["file"]) == 19 and int(counts["http"]) == 10 and int(counts["command"]) == 1
    assert "queued_message      main      also check the lint" in out
    assert "[REDACTED:github-token:" in out and "Zq4vZq4v" not in out
    assert re.search(r"demo/audit\s+on\s+19\s+19\s", out)
    assert "no live dispatchers" in out
    # the folders it named are gone when it ends, and it says so (and how to keep them)
    root = re.search(r"a throwaway install in (\S+)", out).group(1)
    assert f"the throwaway install {root} is removed; `ways demo --keep` keeps it" in out
    assert not os.path.exists(root)
