"""JSON through the interpreter's C codec (`_json`), without importing the json package.

`import json` pulls in `re` (json's decoder and encoder compile their pure-Python
fallbacks' regexes at import), and `re` brings enum, functools and collections: too much
for a blocking rule's hook, a fresh process that decodes one payload and encodes a few
records (bench/RESULTS.md, Blocking path cost). The json package's own work for `loads`
and `dumps` is done by `_json`'s scanner and encoder, built here with json's defaults,
so the results are json's, byte for byte (tests/test_jsoncore.py checks both against
json with hypothesis).

  loads(s)            json.loads(s): str, or bytes as UTF-8 (anything else json reads
                      from bytes, a BOM or UTF-16/32, goes to json itself)
  dumps(obj, ...)     json.dumps(obj, ...) for ensure_ascii, separators, sort_keys,
                      allow_nan, default; no indent (callers that indent use json)
  Decoder(...)        json.JSONDecoder for object_pairs_hook, parse_float,
                      parse_constant: decode(s) and raw_decode(s, idx)
  Encoder(...)        json.JSONEncoder's encode, with the keywords of dumps

Errors are json's own: a malformed document is handed to json (imported then), which
raises its JSONDecodeError (a ValueError) with json's message and position. The
modules a blocking hook may load use this one; the others may use either.
"""

from __future__ import annotations

import _json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_WHITESPACE = " \t\n\r"  # json.decoder.WHITESPACE
_BOM8, _BOM16 = b"\xef\xbb\xbf", (b"\xff\xfe", b"\xfe\xff")  # json.detect_encoding's
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class Decoder:
    """json.JSONDecoder's decode and raw_decode, on `_json`'s scanner. The scanner reads
    its options from these attributes (the names are _json's)."""

    def __init__(
        self,
        *,
        object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
        parse_float: Callable[[str], Any] | None = None,
        parse_constant: Callable[[str], Any] | None = None,
    ) -> None:
        self.object_hook = None
        self.object_pairs_hook = object_pairs_hook
        self.parse_float = parse_float or float
        self.parse_int = int
        self.parse_constant = parse_constant or _CONSTANTS.__getitem__
        self.strict = True
        context: Any = self  # _json reads the attributes above from it
        self._scan = _json.make_scanner(context)

    def raw_decode(self, s: str, idx: int = 0) -> tuple[Any, int]:
        """The value starting at `idx` and where it ends (json's raw_decode)."""
        try:
            got: tuple[Any, int] = self._scan(s, idx)
        except StopIteration as err:
            raise _error("Expecting value", s, err.value) from None
        return got

    def decode(self, s: str) -> Any:
        """The one value in `s`, whitespace around it allowed (json's decode)."""
        start = len(s) - len(s.lstrip(_WHITESPACE))
        obj, end = self.raw_decode(s, start)
        if end != len(s) and len(s.rstrip(_WHITESPACE)) != end:
            tail = s[end:]
            raise _error("Extra data", s, end + len(tail) - len(tail.lstrip(_WHITESPACE)))
        return obj


class Encoder:
    """json.JSONEncoder(...).encode, on `_json`'s encoder (made per call: its record of
    the containers being encoded would outlive a failed call)."""

    def __init__(
        self,
        *,
        ensure_ascii: bool = True,
        separators: tuple[str, str] | None = None,
        sort_keys: bool = False,
        allow_nan: bool = True,
        default: Callable[[Any], Any] | None = None,
    ) -> None:
        self._item, self._key = separators or (", ", ": ")
        self._str = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
        self._sort, self._nan = sort_keys, allow_nan
        self._default = default or _unserializable

    def encode(self, obj: Any) -> str:
        if isinstance(obj, str):
            text: str = self._str(obj)
            return text
        encode = _json.make_encoder(
            {}, self._default, self._str, None, self._key, self._item, self._sort, False, self._nan
        )
        return "".join(encode(obj, 0))


_plain = Decoder()


def loads(s: str | bytes | bytearray) -> Any:
    """json.loads(s)."""
    if not isinstance(s, str):
        if s[:3] == _BOM8 or s[:2] in _BOM16 or (len(s) >= 2 and not (s[0] and s[1])):
            import json  # a BOM, or UTF-16/32: json detects the encoding

            return json.loads(s)
        s = s.decode("utf-8", "surrogatepass")  # as json.loads decodes UTF-8
    if s.startswith("\ufeff"):
        import json

        return json.loads(s)  # json's error for a decoded BOM
    return _plain.decode(s)


def dumps(
    obj: Any,
    *,
    ensure_ascii: bool = True,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
    allow_nan: bool = True,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """json.dumps(obj, ...) for these keywords."""
    return Encoder(
        ensure_ascii=ensure_ascii,
        separators=separators,
        sort_keys=sort_keys,
        allow_nan=allow_nan,
        default=default,
    ).encode(obj)


def _unserializable(o: Any) -> Any:
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def _error(msg: str, doc: str, pos: int) -> ValueError:
    from json import JSONDecodeError

    return JSONDecodeError(msg, doc, pos)
