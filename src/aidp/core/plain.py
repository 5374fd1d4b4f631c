"""`Plain`, the base of aidp's value classes (a fold, a query, a report, a result)."""

from __future__ import annotations


class Plain:
    """Value classes written out instead of @dataclass: each dataclass costs about a
    millisecond of code generation at import, on every one of aidp's many start-ups.
    A subclass names its `__slots__` and lists them in `_fields` (the order of its repr
    and of its equality)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._fields)

    __hash__ = None  # type: ignore[assignment]
