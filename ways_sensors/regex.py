"""Regular expressions for the blocking path, with a light mode that compiles without `re`.

Importing `re` brings enum, functools and collections, and its compiler is pure Python:
a large share of what a blocking rule's hook costs, a fresh process that masks a record
or two (bench/RESULTS.md, 2026-12-03 15:53). What `re.compile` hands the C engine
(`_sre.compile`) is a list of integers that depends only on the pattern, its flags and
the engine's version. So a process chooses, as sha.py's does:

  light()        (the blocking path calls it first) `compile` makes the pattern with
                 `_sre.compile` from the code the cache file holds for it; a pattern
                 the cache lacks is compiled by `re` (imported then), and its code is
                 kept when `_sre.compile` on it gives a pattern equal to re's. save()
                 adds what was learned to the file, before the hook leaves.
  otherwise      `compile` is re.compile.

Masking holds about fifty regexes, and a record reaches few of them: a `Lazy` stands
where the compiled pattern would and compiles it on its first match; its methods then
become the compiled pattern's own (instance attributes shadowing the class's), so the
dispatcher's hot loops pay nothing after the first call. Two threads calling it first
at once compile it twice and keep either: the patterns are equal. `re`'s module-level
helpers (re.split, re.fullmatch) would import `re`: what the blocking path runs writes
them as Lazy patterns too.

Cache: `<cache root>/regex/<cache tag>-<engine magic>.marshal` (roots.py), one per
interpreter and engine version, 0600 in 0700 folders, replaced atomically and read
only when it is a file of ours that nobody else can write (roots.trusted_fd, as the
rule index). It is marshal's: {(source, flags): (flags, code, groups, groupindex,
indexgroup)}, the arguments of `_sre.compile` after the source, at most MAX_PATTERNS of
them in at most MAX_BYTES. marshal is what the interpreter reads its own compiled
modules with, from folders of the same owner; the engine validates the code it is
given (a refused entry is compiled by `re`, as a missing one). Only patterns written in
this package's source go through here, never text from a session: the file holds
code, not content.
"""

from __future__ import annotations

import sys

from .roots import posix

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Iterator
    from re import Pattern
    from typing import Any

IGNORECASE, MULTILINE, DOTALL, VERBOSE, ASCII = 2, 8, 16, 64, 256  # re's flag values
MAX_PATTERNS = 512  # a cache never holds more (masking has about fifty)
MAX_BYTES = 4 << 20  # a larger file is not read
_light: list[bool] = [False]
_cache: dict[tuple[str, int], Any] | None = None  # read on the first compile (light)
_learned: dict[tuple[str, int], Any] = {}  # compiled by re here, not yet saved


_METHODS = ("match", "fullmatch", "search", "finditer", "findall", "split")


class Lazy:
    """`re.compile(source, flags)`, deferred: its matching methods (_METHODS)."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source, self.flags = source, flags

    @property
    def regex(self) -> re.Pattern[str]:
        got: re.Pattern[str] | None = self.__dict__.get("_compiled")
        if got is None:
            got = compile(self.source, self.flags)
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

    def findall(self, text: str, *span: Any) -> list[Any]:
        return self.regex.findall(text, *span)

    def split(self, text: str) -> list[str | Any]:
        return self.regex.split(text)


def light() -> None:
    """Compile from the cache file from now on (the module docstring)."""
    _light[0] = True


def is_light() -> bool:
    return _light[0]


def compile(source: str, flags: int = 0) -> Pattern[str]:
    """re.compile(source, flags); in light mode from the cache when it can be."""
    if not _light[0]:
        import re

        return re.compile(source, flags)
    global _cache
    if _cache is None:
        _cache = _read()
    key = (source, int(flags))
    entry = _cache.get(key)
    if entry is not None:
        try:
            made: Pattern[str] = _engine().compile(source, *entry)
            return made
        except Exception:  # code the engine refuses: compiled by re instead
            _cache.pop(key, None)
    return _learn(source, int(flags))


def save() -> None:
    """Add the patterns `re` compiled in this process to the cache file (light mode);
    a cache that cannot be written only costs the next hook `re`'s compile."""
    if not _learned:
        return
    merged = dict(_cache or {})
    for key, entry in list(_learned.items()):
        if len(merged) >= MAX_PATTERNS:
            break
        merged[key] = entry
    _learned.clear()
    import marshal

    from . import roots
    from .state import secure

    try:
        data = marshal.dumps(merged)
        if len(data) > MAX_BYTES:
            return
        root = roots.cache_root()
        path = _path(root)
        secure.ensure_private_dir(path.rpartition("/")[0], root)
        secure.replace_private(path, data, root)
    except (OSError, ValueError):
        pass


def _learn(source: str, flags: int) -> Pattern[str]:
    import re

    pattern = re.compile(source, flags)
    try:
        entry = _entry(source, flags)
        if _engine().compile(source, *entry) == pattern:  # the engine's own equality: code too
            _learned[(source, flags)] = entry
    except Exception:  # another interpreter's internals: not kept
        pass
    return pattern


def _entry(source: str, flags: int) -> tuple[Any, ...]:
    """What re.compile passes `_sre.compile` after the source (re/_compiler.compile)."""
    import importlib

    try:
        parser = importlib.import_module("re._parser")
        compiler = importlib.import_module("re._compiler")
    except ImportError:  # 3.10
        parser = importlib.import_module("sre_parse")
        compiler = importlib.import_module("sre_compile")
    p = parser.parse(source, flags)
    code = [int(op) for op in compiler._code(p, flags)]
    groupindex = {str(k): int(v) for k, v in p.state.groupdict.items()}
    indexgroup: list[str | None] = [None] * p.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    return (int(flags | p.state.flags), code, p.state.groups - 1, groupindex, tuple(indexgroup))


def _read() -> dict[tuple[str, int], Any]:
    from . import roots

    fd = roots.trusted_fd(_path(roots.cache_root()))
    if fd is None:
        return {}
    try:
        data = posix.read(fd, MAX_BYTES + 1)
    except OSError:
        return {}
    finally:
        posix.close(fd)
    if len(data) > MAX_BYTES:
        return {}
    import marshal

    try:
        got = marshal.loads(data)
    except Exception:  # damaged or not ours to trust: compiled by re, as with no file
        return {}
    return got if isinstance(got, dict) else {}


def _path(cache_root: str) -> str:
    tag = sys.implementation.cache_tag or sys.implementation.name
    return f"{cache_root}/regex/{tag}-{getattr(_engine(), 'MAGIC', 0)}.marshal"


def _engine() -> Any:
    """The C engine, `_sre` (built in; no stub for the type checker)."""
    return __import__("_sre")
