"""Value classes without the dataclasses module.

Nine small classes stand on a blocking rule's path through the hook (a record's Draft,
the rule, its `where`, an attempt's Context and Outcome, the session-file reader's
counts, the Claude Code tracker). As dataclasses they cost that hook the import of
dataclasses, which imports inspect (and ast, dis, tokenize), and one exec per
generated method at each class's creation, on every blocking event (bench/RESULTS.md,
Blocking path cost, 2026-12-03 09:38). Here a class names its fields in `FIELDS` and
writes its own __init__; `Plain` gives it what a dataclass would: equality field by
field with an object of the same class, a repr, and no hash (hash() raises: it may
change). `Frozen`
adds a hash and refuses assignment after __init__, as a frozen dataclass does.
Standard library only, import-free.
"""

from __future__ import annotations

TYPE_CHECKING = False  # type checkers read this as True; typing stays off the hook's path
if TYPE_CHECKING:
    from typing import Any

    from typing_extensions import Self


class Plain:
    """Fields in `FIELDS` (in order); those in `NO_REPR` are left out of the repr."""

    __slots__ = ()
    FIELDS: tuple[str, ...] = ()
    NO_REPR: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Plain) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:  # mutable: unhashable, as a dataclass with eq
        raise TypeError(f"unhashable type: {self.__class__.__qualname__!r}")

    def __repr__(self) -> str:
        shown = (f"{n}={getattr(self, n)!r}" for n in self.FIELDS if n not in self.NO_REPR)
        return f"{self.__class__.__qualname__}({', '.join(shown)})"


class Frozen(Plain):
    """A Plain whose fields are set once, in __init__ through `_set` (the values in
    FIELDS order); hashable."""

    __slots__ = ()

    def _set(self, *values: Any) -> None:
        for name, value in zip(self.FIELDS, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:
        return hash(self._values())

    def replace(self, **changes: Any) -> Self:
        """A copy with `changes` (dataclasses.replace's job): the class's __init__ takes
        every field by name."""
        values = {name: getattr(self, name) for name in self.FIELDS}
        return self.__class__(**{**values, **changes})


def assign(obj: object, defaults: dict[str, Any], values: dict[str, Any]) -> None:
    """Set each field of `obj` from `values`, else from `defaults` (a list default is
    copied: each object gets its own); a name that is not a field is a TypeError, as a
    dataclass's __init__ says."""
    unknown = values.keys() - defaults.keys()
    if unknown:
        raise TypeError(f"unexpected field {sorted(unknown)[0]!r}")
    for name, default in defaults.items():
        if name in values:
            value = values[name]
        else:
            value = list(default) if isinstance(default, list) else default
        object.__setattr__(obj, name, value)
