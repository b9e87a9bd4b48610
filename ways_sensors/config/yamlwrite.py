"""The one writer for sensor files and config.yaml: locked, atomic, comment-preserving.

Every write holds the file's lock (files.locked, kept in the state root so nothing but
the file itself appears in the user's folder), writes a temporary file in the same
folder and renames it into place, keeping the file's mode (new files 0600, in a folder
created 0700: a sensor may hold header secrets). Changing a scalar that is already in the file edits
that one token on its line and nothing else, so comments, quoting, order and layout all
survive byte for byte; adding or removing keys goes through ruamel.yaml's round-trip
mode, which keeps comments and order of everything it does not touch.
"""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING, Any

from ..errors import InvalidError, WriteError
from ..state.files import locked, replace_atomically

if TYPE_CHECKING:
    from ruamel.yaml import YAML

SCALARS = (str, int, float, bool, type(None))


def _yaml() -> YAML:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def load(path: str) -> tuple[Any, str]:
    """(round-trip mapping, text); a missing file is an empty mapping. A file that
    cannot be read is a WriteError, one that is not a YAML mapping an InvalidError:
    either way it is left untouched."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    from .yamlread import YamlError, read_yaml

    try:  # the bounded loader first: ruamel would expand an alias bomb without limit,
        read_yaml(path)  # and a FIFO would block open()
    except FileNotFoundError:
        return CommentedMap(), ""
    except OSError as exc:
        raise WriteError(f"cannot read {path}: {exc.strerror}; left untouched") from None
    except YamlError as exc:
        raise InvalidError(
            f"{path}:{exc.line}: {exc.message}; left untouched",
            hint=f"`ways sensors lint {path}` shows the problem",
        ) from None
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return CommentedMap(), ""
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise WriteError(f"cannot read {path}: {reason}; left untouched") from None
    try:
        data = _yaml().load(text) if text.strip() else None
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise InvalidError(
            f"{path} is not valid YAML{where}; left untouched",
            hint=f"`ways sensors lint {path}` shows the problem",
        ) from None
    if data is None:
        return CommentedMap(), text
    if not isinstance(data, CommentedMap):
        raise InvalidError(f"{path} does not hold a YAML mapping; left untouched")
    return data, text


def render_scalar(value: Any) -> str:
    """A scalar as YAML would write it after `key: `."""
    buf = io.StringIO()
    _yaml().dump({"k": value}, buf)
    out = buf.getvalue().strip()
    return out[len("k:") :].strip()


def _token_end(line: str, col: int, flow: bool) -> int:
    if col < len(line) and line[col] in "'\"":
        q = line[col]
        i = col + 1
        while i < len(line):
            if line[i] == q:
                if q == "'" and i + 1 < len(line) and line[i + 1] == "'":
                    i += 2
                    continue
                return i + 1
            if q == '"' and line[i] == "\\":
                i += 2
                continue
            i += 1
        return len(line)
    end = len(line)
    hash_at = line.find(" #", col)
    if hash_at >= 0:
        end = hash_at
    if flow:
        for stop in (",", "}", "]"):
            j = line.find(stop, col)
            if 0 <= j < end:
                end = j
    return len(line[:end].rstrip())


def _surgical(text: str, data: Any, keypath: list[str], value: Any) -> str | None:
    """Replace one scalar's token in place; None when that is not possible."""
    node = data
    for k in keypath[:-1]:
        if not hasattr(node, "get") or k not in node:
            return None
        node = node[k]
    last = keypath[-1]
    if not hasattr(node, "lc") or last not in node:
        return None
    old = node[last]
    if not isinstance(old, SCALARS) or not isinstance(value, SCALARS):
        return None
    if isinstance(old, str) and "\n" in old:
        return None
    try:
        line_no, col = node.lc.value(last)
    except (KeyError, TypeError, AttributeError):
        return None
    lines = text.splitlines(keepends=True)
    if line_no >= len(lines):
        return None
    line = lines[line_no]
    flow = bool(getattr(node, "fa", None) and node.fa.flow_style())
    end = _token_end(line.rstrip("\r\n"), col, flow)
    rendered = render_scalar(value)
    quote = line[col] if col < len(line) and line[col] in "'\"" else None
    if quote and isinstance(value, str) and not rendered.startswith(("'", '"')):
        rendered = (
            quote + value.replace(quote, quote * 2) + quote
            if quote == "'"
            else quote + value.replace("\\", "\\\\").replace('"', '\\"') + quote
        )
    if flow and any(c in rendered for c in ",{}[]"):
        return None
    lines[line_no] = line[:col] + rendered + line[end:]
    return "".join(lines)


def _ensure_map(node: Any, key: str) -> Any:
    from ruamel.yaml.comments import CommentedMap

    if key not in node or not hasattr(node[key], "get"):
        node[key] = CommentedMap()
    return node[key]


def set_value(path: str, keypath: list[str], value: Any, new_mode: int = 0o600) -> None:
    """Set keypath to value in the YAML file at path (created if missing)."""
    with locked(path):
        data, text = load(path)
        new_text = _surgical(text, data, keypath, value) if text else None
        if new_text is None:
            node = data
            for k in keypath[:-1]:
                node = _ensure_map(node, k)
            node[keypath[-1]] = value
            buf = io.StringIO()
            _yaml().dump(data, buf)
            new_text = buf.getvalue()
        _replace(path, new_text, new_mode)


def write_document(path: str, doc: Any) -> None:
    """Write a whole new document (refuses to replace an existing file)."""
    with locked(path):
        if os.path.exists(path):
            raise WriteError(f"{path} exists already")
        buf = io.StringIO()
        _yaml().dump(doc, buf)
        _replace(path, buf.getvalue(), 0o600)


def unset_value(path: str, keypath: list[str]) -> bool:
    """Remove keypath (and mappings it leaves empty); False when it was not there."""
    with locked(path):
        data, _ = load(path)
        chain = [data]
        node = data
        for k in keypath[:-1]:
            if not hasattr(node, "get") or k not in node:
                return False
            node = node[k]
            chain.append(node)
        if not hasattr(node, "get") or keypath[-1] not in node:
            return False
        del node[keypath[-1]]
        for depth in range(len(keypath) - 2, -1, -1):
            parent, key = chain[depth], keypath[depth]
            if hasattr(parent[key], "get") and not parent[key]:
                del parent[key]
            else:
                break
        buf = io.StringIO()
        if data:
            _yaml().dump(data, buf)
        _replace(path, buf.getvalue(), 0o600)
        return True


def _replace(path: str, text: str, new_mode: int) -> None:
    try:
        mode: int | None = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror}") from None
    if mode is not None and (not os.access(path, os.W_OK) or mode & 0o200 == 0):
        raise WriteError(f"{path} is read-only", hint="make it writable, then run again")
    try:
        os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
        replace_atomically(path, text, new_mode)
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror}") from None
