"""Regexes compiled on first use.

Masking holds about fifty regexes; compiling all of them at import cost a blocking
rule's hook (a fresh process that masks one record) several milliseconds, most of them
for patterns that record never reaches (bench/RESULTS.md, Blocking path cost). A
`Lazy` stands where the compiled pattern stood and compiles it on its first match;
its methods then become the compiled pattern's own (instance attributes shadowing the
class's), so the dispatcher's hot loops pay nothing after the first call. Two threads
calling it first at once compile it twice and keep either: the patterns are equal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_METHODS = ("match", "fullmatch", "search", "finditer")


class Lazy:
    """`re.compile(source, flags)`, deferred: match, fullmatch, search, finditer."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source, self.flags = source, flags

    @property
    def regex(self) -> re.Pattern[str]:
        got: re.Pattern[str] | None = self.__dict__.get("_compiled")
        if got is None:
            got = re.compile(self.source, self.flags)
            for name in _METHODS:
                setattr(self, name, getattr(got, name))
            self.__dict__["_compiled"] = got
        return got

    def match(self, text: str, *span: Any) -> re.Match[str] | None:
        return self.regex.match(text, *span)

    def fullmatch(self, text: str, *span: Any) -> re.Match[str] | None:
        return self.regex.fullmatch(text, *span)

    def search(self, text: str, *span: Any) -> re.Match[str] | None:
        return self.regex.search(text, *span)

    def finditer(self, text: str, *span: Any) -> Iterator[re.Match[str]]:
        return self.regex.finditer(text, *span)
