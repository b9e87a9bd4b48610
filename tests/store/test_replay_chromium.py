"""`ways sessions replay SID --html FILE` opened in Debian's headless Chromium: the
rendered page shows every record of the session, in order, each section's text, and
markup a prompt smuggled in as text; nothing is fetched (the browser's every request
would reach a loopback server of ours, through its proxy setting and the planted URL).

`sh scripts/setup.sh` installs Debian's `chromium` when it is missing and it runs as
root (CI); elsewhere `apt-get install chromium`.
"""

from __future__ import annotations

import html.parser
import json
import shutil
import stat
import subprocess

from ..servers import Server
from .play import play

EVERY = (
    "user_prompt",
    "tool_call",
    "tool_result",
    "assistant_response",
    "subagent",
    "compaction",
    "session_start",
    "session_end",
)
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


class Dom(html.parser.HTMLParser):
    """The rendered page's timeline items (data-section, data-seq, their text) and every
    element name."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[dict] = []
        self.tags: set[str] = set()
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        a = dict(attrs)
        if tag == "li" and "rec" in (a.get("class") or ""):
            self.items.append({"section": a["data-section"], "seq": a["data-seq"], "text": ""})
            self.depth = 1
        elif self.depth and tag not in ("br", "meta"):
            self.depth += 1

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth and self.items:
            self.items[-1]["text"] += data


CHROMIUM_HOSTS = ("google.com", "gvt1.com", "googleapis.com", "gstatic.com")


def chromium_s_own(request: str) -> bool:
    """A request Chromium makes of its own: to Google's hosts, a CONNECT (host:443) or a
    proxied GET (http://host/...)."""
    host = request.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]
    return host.endswith(CHROMIUM_HOSTS)


def rendered(page, tmp_path, proxy: Server) -> str:
    """The DOM Chromium built from the page (--dump-dom), in a fresh profile, every
    request it might make sent to `proxy`."""
    assert shutil.which(CHROMIUM), "chromium is missing: apt-get install chromium"
    argv = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--proxy-server=http://127.0.0.1:{proxy.port}",
        "--proxy-bypass-list=<-loopback>",
        "--dump-dom",
        page.as_uri(),
    ]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_the_replay_page_renders_every_record_and_loads_nothing(install, tmp_path):
    proxy = Server("accept")
    planted = (
        f'<img src="http://127.0.0.1:{proxy.port}/planted.png">'
        f"<script>document.title='ran'</script>"
        f'<link rel="stylesheet" href="http://127.0.0.1:{proxy.port}/planted.css">'
    )

    def plant(p):
        if isinstance(p, dict) and p.get("hook_event_name") == "UserPromptSubmit":
            return {**p, "prompt": p["prompt"] + " " + planted}
        return p

    r = install.ways("settings", "set", "ways.sensors.store.enabled", "true")
    assert r.returncode == 0, r.stderr
    sid = play(install, "claude-code", plant)
    page = tmp_path / "replay.html"
    r = install.ways("sessions", "replay", sid, "--html", str(page))
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    stored = json.loads(install.ways("sessions", "show", sid, "--json").stdout)["records"]

    dom = Dom()
    dom.feed(rendered(page, tmp_path, proxy))
    # the page fetched nothing: what reached the proxy is Chromium's own calls home, which
    # it makes for an empty page too (its clock, its sign-in, its components)
    assert [p for p in proxy.paths if not chromium_s_own(p)] == []
    assert not any("planted" in p for p in proxy.paths)
    assert "img" not in dom.tags and "script" not in dom.tags
    assert [(i["section"], i["seq"]) for i in dom.items] == [
        (x["section"], str(x["seq"])) for x in stored
    ]
    sections = {x["section"] for x in stored}
    assert set(EVERY) <= sections
    for item, record in zip(dom.items, stored, strict=True):
        data = record["data"]
        for key in ("prompt", "text", "command"):
            if isinstance(data.get(key), str):
                assert " ".join(data[key].split()) in " ".join(item["text"].split())
    prompts = [i["text"] for i in dom.items if i["section"] == "user_prompt"]
    assert any(planted in t for t in prompts)  # the markup shown as text


def test_replay_of_an_unknown_session_exits_1_and_writes_nothing(install, tmp_path):
    install.ways("settings", "set", "ways.sensors.store.enabled", "true")
    play(install, "cursor")
    page = tmp_path / "none.html"
    r = install.ways("sessions", "replay", "no-such-session", "--html", str(page))
    assert (r.returncode, page.exists()) == (1, False)
    assert "no session no-such-session" in r.stderr
