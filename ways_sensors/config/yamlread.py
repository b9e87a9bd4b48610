"""Reading sensor files and config.yaml: one YAML document, bounded, with line marks.

Every file ways reads that a user or a project controls goes through `read_yaml`: at
most MAX_YAML_BYTES of a regular file (a FIFO never blocks), no aliases, nesting at most
MAX_DEPTH, no duplicate keys, no value the loader cannot build. Whatever it refuses is
a YamlError with the line to show; the caller refuses that file alone. `position`
turns a spec error's path into the line and column of the node it names. libyaml
parses where PyYAML has it, Python where it has not; the composing and every check
above are the same Python code under either (`_Bounded`).
"""

from __future__ import annotations

import os
import stat
from typing import Any, Protocol, cast

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import Resolver
from yaml.scanner import Scanner

MAX_YAML_BYTES = 1 << 20  # a sensor file or config.yaml; bounds the pure-Python parser's time
MAX_DEPTH = 64  # nesting of mappings and lists; sensor files need about 6


class YamlError(ValueError):
    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.message = message
        self.line = line


class _Refused(yaml.MarkedYAMLError):
    """Valid YAML this loader will not read (its problem is the whole message)."""


class _Peeking(Protocol):
    def peek_event(self) -> Any: ...


class _Bounded(Composer, SafeConstructor, Resolver):
    """A safe loader refusing aliases, nesting beyond MAX_DEPTH and values it cannot build.
    Its parser comes from the class below it (`_CLoader`, `_PyLoader`): the composer,
    PyYAML's own in Python, comes first in their order, so every node passes through
    `compose_node` below whichever parser made its event.

    Aliases are refused outright rather than allowed within an expansion budget: a few
    hundred bytes of nested anchors (`b: &b [*a, *a, ...]`, nine levels) stand for a
    billion nodes, and every step after the parser (the duplicate-key walk, merging the
    layers, typed decoding, the index's JSON) walks the expanded tree, so a budget would
    have to be enforced in each of them. Sensor files and config.yaml are short and
    hand-written: they never need `*name` or the `<<: *name` merge key. Without
    aliases the node graph is a tree, so all of those steps are linear in the file.
    """

    def _start(self) -> None:
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = cast(_Peeking, self).peek_event()  # the stubs leave the parser untyped
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(
                None,
                None,
                f"alias *{event.anchor} refused: aliases are not allowed in sensor files "
                "or config.yaml (a nest of them can expand to billions of values); "
                "write the value out in full",
                event.start_mark,  # type: ignore[arg-type]  # the stubs know no libyaml mark
            )
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Refused(
                    None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, TypeError, AttributeError, OverflowError) as exc:
            # e.g. a date like 2001-13-45, or an integer of 5,000 digits
            raise _Refused(None, None, f"cannot read this value: {exc}", node.start_mark) from None


class _PyLoader(_Bounded, Reader, Scanner, Parser):
    """Parsed in Python: where PyYAML was built without libyaml."""

    def __init__(self, stream: bytes) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        self._start()


_BoundedLoader: type[_CLoader | _PyLoader] = _PyLoader
if yaml.__with_libyaml__:
    from yaml._yaml import CParser

    class _CLoader(_Bounded, CParser):
        """Parsed by libyaml, PyYAML's C parser: scanning and parsing in Python were
        most of what a command spent reading the sensor files. CSafeLoader would
        compose in C too, past the checks above."""

        def __init__(self, stream: bytes) -> None:
            CParser.__init__(self, stream)
            self._start()

    _BoundedLoader = _CLoader


def _read_bounded(path: str) -> bytes:
    """The bytes of a regular file of at most MAX_YAML_BYTES, or YamlError. O_NONBLOCK:
    a FIFO named like a sensor file would block the open itself."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise YamlError("not a regular file", 1)
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_YAML_BYTES:
            chunk = os.read(fd, MAX_YAML_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > MAX_YAML_BYTES:
        raise YamlError(f"larger than {MAX_YAML_BYTES} bytes; a sensor file is never this big", 1)
    return b"".join(chunks)


def read_yaml(path: str) -> tuple[Any, Any]:
    """Parse one YAML document; returns (data, node) so errors can name a line. Whatever
    would make a file slow or crash the loader is a YamlError: the file is refused alone."""
    return parse(_read_bounded(path))


def parse(text: bytes, parser: type[_CLoader | _PyLoader] | None = None) -> tuple[Any, Any]:
    """`read_yaml` for bytes in hand; `parser` chooses the loader (the tests hold both
    to the same data and refusals)."""
    try:
        loader = (parser or _BoundedLoader)(text)
        try:
            node = loader.get_single_node()
            _check_duplicate_keys(node)
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = str(exc.problem or exc)
        if "maximum nesting depth" in problem:  # libyaml's own bound, met scanning ahead
            raise YamlError(f"nested deeper than {MAX_DEPTH} levels", line) from None
        prefix = "" if isinstance(exc, _Refused) else "not valid YAML: "
        raise YamlError(f"{prefix}{problem}", line) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"not valid YAML: {exc}", 1) from None
    except RecursionError:  # a caller already deep in its stack
        raise YamlError(f"nested deeper than {MAX_DEPTH} levels", 1) from None
    return data, node


def _check_duplicate_keys(node: Any) -> None:
    """A key twice in one mapping is an error; linear, as no alias reaches a node twice."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for k, v in node.value:
            key = getattr(k, "value", None)
            if isinstance(key, str):
                if key in seen:
                    raise yaml.MarkedYAMLError(
                        problem=f"duplicate key {key!r}", problem_mark=k.start_mark
                    )
                seen.add(key)
            _check_duplicate_keys(v)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            _check_duplicate_keys(v)


def position(node: Any, path: list[str | int], value: bool = False) -> tuple[int, int]:
    """The 1-based (line, column) of the deepest key the path reaches, or, with `value`,
    of the value under that key when the whole path is found (the file's start at worst)."""
    if node is None:
        return 1, 1
    mark = node.start_mark
    for part in path:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if getattr(k, "value", None) == part:
                    mark = k.start_mark
                    node = v
                    break
            else:
                return mark.line + 1, mark.column + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return mark.line + 1, mark.column + 1
            node = node.value[part]
            mark = node.start_mark
        else:
            return mark.line + 1, mark.column + 1
    if value:
        mark = node.start_mark
    return mark.line + 1, mark.column + 1
