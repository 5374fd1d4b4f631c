"""The mapping behind a snapshot-backed `Fold`'s `tasks` and `task_keys`: entries from the
snapshot's sections (`columns.Base`, located by id), replaced or added by the lines
folded on top (the overlay). `LazyTasks` (lazy.py) decodes tasks; `LazyKeys` gives
their fold keys.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aidp.fold import FoldKey
    from aidp.index.columns import Base, Loc


class _Lazy(MutableMapping):  # type: ignore[type-arg]
    """Base entries from the snapshot, overlaid by what was folded on top."""

    def __init__(self, base: Base) -> None:
        self._b = base
        self._over: dict[str, Any] = {}
        self._deleted: set[str] = set()

    def _base(self, loc: Loc) -> Any:
        raise NotImplementedError

    def __getitem__(self, rid: str) -> Any:
        over = self._over.get(rid, self)
        if over is not self:
            return over
        if rid in self._deleted or not isinstance(rid, str):
            raise KeyError(rid)
        loc = self._b.locate(rid)
        if loc is None:
            raise KeyError(rid)
        return self._base(loc)

    def __setitem__(self, rid: str, value: Any) -> None:
        self._over[rid] = value
        self._deleted.discard(rid)

    def __delitem__(self, rid: str) -> None:
        if rid in self._deleted:
            raise KeyError(rid)
        in_base = isinstance(rid, str) and self._b.locate(rid) is not None
        if rid in self._over:
            del self._over[rid]
        elif not in_base:
            raise KeyError(rid)
        if in_base:
            self._deleted.add(rid)

    def __contains__(self, rid: object) -> bool:
        if rid in self._over:
            return True
        if not isinstance(rid, str) or rid in self._deleted:
            return False
        return self._b.locate(rid) is not None

    def _extra(self) -> list[str]:
        """Overlay ids that are not in the base, in the order they were added."""
        locate = self._b.locate
        return [rid for rid in self._over if locate(rid) is None]

    def __iter__(self) -> Iterator[str]:
        deleted = self._deleted
        for rid in self._b.ids():
            if rid not in deleted:
                yield rid
        yield from self._extra()

    def __len__(self) -> int:
        return self._b.count - len(self._deleted) + len(self._extra())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.items())!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (dict, _Lazy)):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def _shadowed_locs(self) -> list[Loc]:
        """Where the base entries replaced or deleted since the snapshot was made are."""
        locate = self._b.locate
        found = []
        for rid in (*self._over, *self._deleted):
            loc = locate(rid)
            if loc is not None:
                found.append(loc)
        return found

    def _shadowed(self) -> set[int]:
        """Rows of the base entries replaced or deleted since the snapshot was made."""
        return {group.rows[j] for group, j in self._shadowed_locs()}


class LazyKeys(_Lazy):
    """`Fold.task_keys`, from the snapshot."""

    def _base(self, loc: Loc) -> FoldKey:
        group, j = loc
        return (group.stamps[j], group.numbers[j])
