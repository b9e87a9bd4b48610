"""Every relative link and `#anchor` in README.md and docs/*.md resolves: the file or
folder exists in the repository, and the anchor is a heading of the page it names,
slugged as GitHub slugs it. The README is a front door: every page under docs/ is
linked from it. Links to other sites are not fetched (the suite stays on loopback)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from .conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

# a fenced block, indented or not (evidence.md fences blocks inside list items); its
# lines are never headings or links
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?^[ \t]*\1[ \t]*$", re.M | re.S)
CODE = re.compile(r"(`+)(.+?)\1")
HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.M)
LINK = re.compile(r"!?\[[^\]\n]*\]\(<?([^)\s>]*)>?(?:[ \t]+\"[^\"]*\")?\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]*<?(\S+?)>?(?:[ \t]|$)", re.M)
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def prose(text: str) -> str:
    """The text with fenced blocks emptied (kept as blank lines, so line counts hold)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text (a link's text, a code span's
    content), lower-cased, every character but letters, digits, `_`, `-` and spaces
    dropped, spaces made `-`."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", CODE.sub(r"\2", text))
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor the page has; a repeated heading gets `-1`, `-2`, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for m in HEADING.finditer(prose(page.read_text())):
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def targets(page: Path) -> list[tuple[int, str]]:
    """(line, target) of every link, image and link reference outside code."""
    text = prose(page.read_text())
    text = CODE.sub(lambda m: "x" * len(m.group(0)), text)  # a code span's text is no link
    found = [(m.start(), m.group(1)) for m in LINK.finditer(text)]
    found += [(m.start(), m.group(1)) for m in REFERENCE.finditer(text)]
    return [(text.count("\n", 0, at) + 1, target) for at, target in sorted(found)]


def broken(page: Path, root: Path) -> list[str]:
    """What does not resolve in the page, one line each: `page:line: target: why`."""
    problems = []
    for line, target in targets(page):
        if SCHEME.match(target):
            continue  # another site (https:, mailto:): not fetched
        where, _, anchor = target.partition("#")
        # GitHub reads a link from the page's folder, or from the repository's top for `/`
        path = (
            page
            if not where
            else (root if where[0] == "/" else page.parent) / unquote(where.lstrip("/"))
        )
        why = ""
        if not path.resolve().is_relative_to(root.resolve()):
            why = "outside the repository"
        elif not path.exists():
            why = "no such file"
        elif anchor and path.suffix == ".md" and unquote(anchor) not in anchors(path):
            why = f"no heading #{anchor} in {path.relative_to(root)}"
        if why:
            problems.append(f"{page.relative_to(root)}:{line}: {target}: {why}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_and_anchor_resolves(page):
    assert broken(page, REPO) == []


def test_every_docs_page_is_linked_from_the_readme():
    linked = {
        (REPO / target.partition("#")[0]).resolve()
        for _, target in targets(REPO / "README.md")
        if not SCHEME.match(target)
    }
    assert [p.name for p in PAGES[1:] if p.resolve() not in linked] == []


def test_slugs_follow_githubs_rules():
    assert (
        slug("What a preview shows (`ways sensors test`)")
        == "what-a-preview-shows-ways-sensors-test"
    )
    assert slug("`{date}` and chains across files") == "date-and-chains-across-files"
    assert slug("Numbering: `seq` and `rule_seq`") == "numbering-seq-and-rule_seq"
    assert slug("Wiring it into [Claude Code](https://x.example)") == "wiring-it-into-claude-code"
    assert slug("Syslog (`dispatch: {syslog: ...}`)") == "syslog-dispatch-syslog-"


def test_the_check_finds_a_missing_file_a_missing_anchor_and_skips_code(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "# A\n\n## Same\n\n## Same\n\n```yaml\n# not a heading\n[x](gone.md)\n```\n"
    )
    page = tmp_path / "README.md"
    page.write_text(
        "# Front\n\n"
        "[ok](docs/a.md#same-1) [self](#front) `[code](gone.md)` [web](https://x.example/y)\n"
        "[from the top](/docs/a.md#a) ![image](docs) [spaced](docs/a%2Emd)\n"
        "[no file](docs/b.md) [no heading](docs/a.md#same-2)\n"
        "[in code](docs/a.md#not-a-heading)\n"
        "[up](../elsewhere.md)\n\n"
        "[ref]: docs/c.md\n"
    )
    assert broken(page, tmp_path) == [
        "README.md:5: docs/b.md: no such file",
        "README.md:5: docs/a.md#same-2: no heading #same-2 in docs/a.md",
        "README.md:6: docs/a.md#not-a-heading: no heading #not-a-heading in docs/a.md",
        "README.md:7: ../elsewhere.md: outside the repository",
        "README.md:9: docs/c.md: no such file",
    ]
    assert broken(tmp_path / "docs" / "a.md", tmp_path) == []
