"""Masking throughput on ordinary and hostile text, recall by family, `verify` on 100,000 records.

  ordinary   MB/s of mask_record over large realistic outputs (logs, test runs, JSON,
             code, prose, a shell session), clean or with a few secrets
  hostile    MB/s of mask_text over 150 KB and 300 KB of each hostile family (a needle
             repeated, or a needle with random bodies), and the 300/150 time ratio:
             linear is about 2 (it was 4 and more before the scan was rewritten)
  corpus     recall and clean-line alteration on tests/corpus, per family, dev and held out
  verify     seconds for `ways sensors verify` on 100,000 chained records
Prints the `## Masking throughput` section of bench/RESULTS.md.
Usage: python bench/privacy_bench.py [--quick]   (--quick: one run each, no verify)
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
R = random.Random(7)
A36 = "Zq4vB7nK2mXc9LpQ1rSt5UwYaD3eF6gH8jKl"


def outputs() -> dict[str, str]:
    """Large tool outputs, deterministic. The keyword-dense log draws every word from a
    list where one word in seven names a secret: far denser than real logs."""
    words = "build ok test passed warning deprecated token limit key value session password"
    words += " reset flow handler request response module import error"
    vocab = words.split(" ")
    log = "\n".join(
        f"2026-11-29T11:{i % 60:02d}:00Z INFO {' '.join(R.choices(vocab, k=12))} "
        f"id={R.getrandbits(64):x}"
        for i in range(40_000)
    )
    tests = "\n".join(
        f"tests/test_{i}.py::test_case_{i} PASSED [{i % 100:3d}%]" for i in range(60_000)
    )
    listing = json.dumps(
        [
            {
                "id": R.getrandbits(128),
                "name": f"item-{i}",
                "sha": f"{R.getrandbits(160):040x}",
                "tags": R.choices(vocab, k=4),
            }
            for i in range(20_000)
        ]
    )
    code = "".join(f"function f{i}(a,b){{return a.key+b.token+{i}}};" for i in range(60_000))
    source = "\n".join(
        f"def handler_{i}(request, cache):\n"
        f'    """Serve item {i}; the token is read from the session, never logged."""\n'
        f'    cache_key = f"item:{{request.user.id}}:{i}"\n'
        f'    token = request.headers.get("Authorization", "")\n'
        f"    if not token:\n        raise PermissionError('missing token')\n"
        f"    return cache.get(cache_key) or render(request, 'item.html', {{'n': {i}}})\n"
        for i in range(25_000)
    )
    prose_words = "the a of to and in is that for on with as by it this be are from or at an"
    prose_words += " which password token key session user account reset request service rule"
    prose_vocab = prose_words.split(" ")
    prose = "\n\n".join(
        " ".join(R.choices(prose_vocab, k=R.randint(40, 90))).capitalize() + "."
        for _ in range(12_000)
    )
    shell = "\n".join(
        R.choice(
            [
                f"$ git commit -m 'fix #{i}' && git push origin main",
                f"$ docker run -d -p {8000 + i % 999}:80 --name web{i} nginx:1.27",
                f"$ mkdir -p build/{i} && cp -r src build/{i}/",
                f"$ curl -s https://api.acme.dev/v1/items/{i}?page=2 | jq .name",
                f"$ ls -la /var/log/app{i % 9}",
                f"-rw-r--r-- 1 app app {R.randint(100, 99999)} Nov 29 11:40 app{i}.log",
                f"Step {i % 20}/20 : RUN pip install -r requirements.txt",
                f" ---> Running in {R.getrandbits(48):012x}",
            ]
        )
        for i in range(60_000)
    )
    secret = f"\nexport GITHUB_TOKEN=ghp_{A36}\nDB_PASSWORD=hunter22\n"
    with_secrets = log[: len(log) // 2] + secret + log[len(log) // 2 :]
    return {
        "keyword-dense log": log,
        "test run": tests,
        "JSON listing": listing,
        "minified code": code,
        "Python source": source,
        "prose": prose,
        "shell session": shell,
        "keyword-dense log with 2 secrets": with_secrets,
    }


def hostile(size: int) -> dict[str, str]:
    """Each family at `size` characters."""

    def repeated(needle: str) -> str:
        return (needle * (size // len(needle) + 1))[:size]

    def bodies(needle: str) -> str:
        rnd = random.Random(needle)
        alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
        out, n = [], 0
        while n < size:
            piece = needle + "".join(rnd.choice(alphabet) for _ in range(rnd.choice([5, 40, 300])))
            piece += rnd.choice(" .:=/\n")
            out.append(piece)
            n += len(piece)
        return "".join(out)[:size]

    families = {
        "`sk-` repeated": repeated("sk-"),
        "`eyJ` repeated": repeated("eyJ"),
        "`mysql ` repeated": repeated("mysql "),
        "`mysql -p` repeated": repeated("mysql -p"),
        "`password is 1` repeated": repeated("password is 1"),
        "`key=` repeated": repeated("key="),
        "`://:` repeated": repeated("://:"),
        "`-----BEGIN PRIVATE KEY-----` repeated": repeated("-----BEGIN PRIVATE KEY-----"),
        "Discord-token prefix repeated": repeated("MTk4NjIyNDgzNDcxOTI1MjQ4."),
        "AWS key id repeated": repeated("AKIA" + "A" * 16 + " "),
        "`ghp_` + random bodies": bodies("ghp_"),
        "`curl -u ` + random bodies": bodies("curl -u "),
    }
    return families


def _median_seconds(fn, runs: int) -> float:
    """CPU seconds (the scan is single-threaded CPU work; the machine is shared, so its
    wall clock carries other sessions' load)."""
    times = []
    for _ in range(runs):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return statistics.median(times)


def scan_ordinary(runs: int) -> list[tuple[str, float, float]]:
    from ways_sensors import redact

    rows = []
    for name, text in outputs().items():
        rec = {"section": "tool_result", "data": {"output": {"stdout": text}}}
        secs = _median_seconds(lambda rec=rec: redact.mask_record(rec), runs)
        mb = len(text.encode()) / 2**20
        rows.append((name, mb, mb / secs))
    return rows


def scan_small(runs: int) -> tuple[int, float]:
    """(strings, microseconds per string) over records shaped like hook payloads: many
    short strings, most of them clean."""
    from ways_sensors import redact

    records = [
        {
            "section": "tool_call",
            "session_id": "5c1e7a2b-3f4d-4e8a-9b6c-0d2f1a3b4c5d",
            "timestamp": "2026-11-29T11:40:02.123Z",
            "project": f"/home/dev/src/app{i}",
            "data": {
                "tool_name": R.choice(["Bash", "Read", "Edit", "Grep"]),
                "input": {
                    "command": R.choice(
                        ["git status", f"pytest tests/test_{i}.py -q", f"ls -la src/{i}"]
                    ),
                    "description": "Run the unit tests of the parser module",
                    "file_path": f"/home/dev/src/app/module_{i}.py",
                },
                "output": {
                    "stdout": f"{i} passed in 0.{i % 90 + 10}s\nok",
                    "stderr": "",
                    "interrupted": False,
                },
                "cwd": "/home/dev/src/app",
                "permission_mode": "default",
                "transcript_path": f"/home/dev/.claude/projects/app/{i:08x}.jsonl",
            },
        }
        for i in range(500)
    ]
    strings = sum(
        isinstance(v, str)
        for r in records
        for v in [*r.values(), *r["data"].values(), *r["data"]["input"].values()]
    )
    strings += sum(isinstance(v, str) for r in records for v in r["data"]["output"].values())
    secs = _median_seconds(lambda: [redact.mask_record(r) for r in records], runs)
    return strings, secs / strings * 1e6


def scan_hostile(runs: int) -> list[tuple[str, float, float, float]]:
    """(family, MB/s at 150 KB, MB/s at 300 KB, time ratio 300/150)."""
    from ways_sensors import redact

    small, large = hostile(150_000), hostile(300_000)
    rows = []
    for name in small:
        t1 = _median_seconds(lambda t=small[name]: redact.mask_text(t), runs)
        t2 = _median_seconds(lambda t=large[name]: redact.mask_text(t), runs)
        rows.append((name, 150_000 / 2**20 / t1, 300_000 / 2**20 / t2, t2 / t1))
    return rows


def corpus() -> dict:
    from ways_sensors import redact

    secrets = [
        json.loads(x) for x in (REPO / "tests/corpus/secrets.jsonl").read_text().split("\n") if x
    ]
    clean = [
        json.loads(x) for x in (REPO / "tests/corpus/clean.jsonl").read_text().split("\n") if x
    ]
    found: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in secrets:
        hit = r["secret"] not in redact.mask_text(r["text"])[0]
        for part in (r["set"], "all"):
            found[r["family"]][part][0] += hit
            found[r["family"]][part][1] += 1
    altered: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for c in clean:
        changed = redact.mask_text(c["text"])[0] != c["text"]
        for part in (c["set"], "all"):
            altered[c["family"]][part][0] += changed
            altered[c["family"]][part][1] += 1
    return {
        "secrets": secrets,
        "clean": clean,
        "kinds": len({r["kind"] for r in secrets}),
        "found": found,
        "altered": altered,
    }


def verify_100k() -> float:
    from ways_sensors.pipeline import chain

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.jsonl"
        prev = chain.GENESIS
        with open(path, "w") as f:
            for i in range(1, 100_001):
                rec = {
                    "schema": "ways.sensor.record/1",
                    "section": "tool_call",
                    "seq": i,
                    "session_id": "s",
                    "agent_id": None,
                    "agent_type": "main",
                    "timestamp": "2026-11-29T11:40:02.123Z",
                    "project": "/p",
                    "hook_event": "PreToolUse",
                    "data": {"tool_name": "Bash", "input": {"command": f"echo {i}"}},
                    "sensor": "audit",
                    "rule": "all",
                    "rule_seq": i,
                }
                prev = chain.seal(rec, prev)
                f.write(json.dumps(rec) + "\n")
        ways = str(Path(sys.executable).parent / "ways")
        t = time.perf_counter()
        r = subprocess.run([ways, "sensors", "verify", str(path)], capture_output=True)
        took = time.perf_counter() - t
        assert r.returncode == 0, r.stdout
        return took


def _pct(pair: list[int]) -> str:
    return f"{100 * pair[0] / pair[1]:.1f} % ({pair[0]}/{pair[1]})" if pair[1] else "-"


def report(quick: bool) -> None:
    runs = 1 if quick else 5
    ordinary, bad, figures = scan_ordinary(runs), scan_hostile(runs), corpus()
    n_small, us_small = scan_small(runs)
    print(f"## Masking throughput (`bench/privacy_bench.py`)\n\npython {sys.version.split()[0]}")
    print("\nOrdinary text, `mask_record` on one large tool output (median of 5, CPU time):\n")
    print("| output | size | throughput |\n|---|---:|---:|")
    for name, mb, rate in ordinary:
        print(f"| {name} | {mb:.1f} MB | {rate:.0f} MB/s |")
    print(
        f"\nSmall strings: {n_small} strings of 500 records shaped like hook payloads, "
        f"{us_small:.1f} us per string.\n"
    )
    print("Hostile text, `mask_text` (median of 5, CPU time); linear means a ratio near 2:\n")
    print("| family | 150 KB | 300 KB | time 300 KB / 150 KB |\n|---|---:|---:|---:|")
    for name, r1, r2, ratio in bad:
        print(f"| {name} | {r1:.1f} MB/s | {r2:.1f} MB/s | {ratio:.2f} |")
    s, c = figures["secrets"], figures["clean"]
    print(
        f"\nCorpus (`tests/corpus/`): {len(s)} secrets over {figures['kinds']} kinds, "
        f"{len(c)} look-alike lines; held out: "
        f"{sum(r['set'] == 'heldout' for r in s)} secrets, "
        f"{sum(x['set'] == 'heldout' for x in c)} lines.\n"
    )
    print("| secret family | recall, dev | recall, held out | recall, all |\n|---|---:|---:|---:|")
    total: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for fam in sorted(figures["found"]):
        parts = figures["found"][fam]
        for part in ("dev", "heldout", "all"):
            total[part][0] += parts[part][0]
            total[part][1] += parts[part][1]
        print(f"| {fam} | {_pct(parts['dev'])} | {_pct(parts['heldout'])} | {_pct(parts['all'])} |")
    print(f"| **all** | {_pct(total['dev'])} | {_pct(total['heldout'])} | {_pct(total['all'])} |")
    print("\n| look-alike family | altered, dev | altered, held out |\n|---|---:|---:|")
    total = defaultdict(lambda: [0, 0])
    for fam in sorted(figures["altered"]):
        parts = figures["altered"][fam]
        for part in ("dev", "heldout"):
            total[part][0] += parts[part][0]
            total[part][1] += parts[part][1]
        print(f"| {fam} | {_pct(parts['dev'])} | {_pct(parts['heldout'])} |")
    print(f"| **all** | {_pct(total['dev'])} | {_pct(total['heldout'])} |")
    if not quick:
        print(f"\n- `ways sensors verify` on 100,000 chained records: {verify_100k():.2f} s")


if __name__ == "__main__":
    os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="privacy-bench-"))
    report("--quick" in sys.argv)
