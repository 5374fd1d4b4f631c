"""The mappings a snapshot-backed `Fold` gets: `Fold.tasks` and `Fold.task_keys`.

Entries come from the columns; lines folded on top (the overlay) replace or add
entries. A task is decoded from its line in the log when first asked for, read with
pread (never a memory map: another program truncating a mapped file would kill the
reader with SIGBUS), and checked to be the task the columns said is there.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Collection, Iterator, MutableMapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import orjson

from aidp.errors import StorageError
from aidp.fold import mend_tags, parse_line, task_tags
from aidp.index.columns import status_key, summary
from aidp.model import UNKNOWN_TS, remember_ts, ts_of

if TYPE_CHECKING:
    from aidp.fold import FoldKey
    from aidp.index.columns import _Columns
    from aidp.index.reader import LogFile
    from aidp.model import Record



def _changed() -> StorageError:
    return StorageError(
        "The tasklist was rewritten by another program while it was read; run the "
        "command again"
    )


# Whether to freeze what a decode allocated (see _no_gc). The command line sets it: a
# command's process is short-lived, and a library user keeps its collector as it was.
FREEZE = False


@contextmanager
def _no_gc() -> Iterator[None]:
    """Decoding thousands of acyclic dicts triggers collections that find nothing, and
    the first collection afterwards would still walk them all (10-20 ms at 100k events):
    the cycle collector is off meanwhile, and with FREEZE what exists is frozen after
    (reference counting still frees it; only the cycle collector skips it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if FREEZE:
            gc.freeze()
        if enabled:
            gc.enable()


def _has_prefix(rid: str, prefix: str, *, last_part: bool) -> bool:
    return (rid.rpartition("_")[2] if last_part else rid).startswith(prefix)



class _Lazy(MutableMapping):  # type: ignore[type-arg]
    """Base entries from the columns, overlaid by what was folded on top."""

    def __init__(self, cols: _Columns) -> None:
        self._cols = cols
        self._over: dict[str, Any] = {}
        self._deleted: set[str] = set()

    def _base(self, i: int) -> Any:
        raise NotImplementedError

    def __getitem__(self, rid: str) -> Any:
        over = self._over.get(rid, self)
        if over is not self:
            return over
        if rid in self._deleted or not isinstance(rid, str):
            raise KeyError(rid)
        i = self._cols.index(rid)
        if i is None:
            raise KeyError(rid)
        return self._base(i)

    def __setitem__(self, rid: str, value: Any) -> None:
        self._over[rid] = value
        self._deleted.discard(rid)

    def __delitem__(self, rid: str) -> None:
        if rid in self._deleted:
            raise KeyError(rid)
        in_base = isinstance(rid, str) and self._cols.index(rid) is not None
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
        return self._cols.index(rid) is not None

    def _extra(self) -> list[str]:
        """Overlay ids that are not in the base, in the order they were added."""
        index = self._cols.index
        return [rid for rid in self._over if index(rid) is None]

    def __iter__(self) -> Iterator[str]:
        deleted = self._deleted
        for rid in self._cols.ids():
            if rid not in deleted:
                yield rid
        yield from self._extra()

    def __len__(self) -> int:
        return self._cols.count - len(self._deleted) + len(self._extra())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.items())!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (dict, _Lazy)):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def _shadowed(self) -> set[int]:
        """Base entries replaced or deleted since the columns were built."""
        index = self._cols.index
        found = set()
        for rid in (*self._over, *self._deleted):
            i = index(rid)
            if i is not None:
                found.add(i)
        return found


class LazyTasks(_Lazy):
    """`Fold.tasks`: a task is decoded from its line in the log when first asked for."""

    def __init__(self, cols: _Columns, log: LogFile) -> None:
        super().__init__(cols)
        self._log = log
        self._decoded: dict[int, Record] = {}

    def _base(self, i: int) -> Record:
        record = self._decoded.get(i)
        if record is None:
            record = self._decoded[i] = self._decode(i)
        return record

    def _read(self, start: int, end: int) -> bytes:
        try:
            return self._log.read(start, end)
        except OSError:  # Changed (it shrank), or the disk failing under us
            raise _changed() from None

    def _decode(self, i: int, raw: bytes | None = None) -> Record:
        cols = self._cols
        if raw is None:
            start = cols.starts[i]
            raw = self._read(start, start + cols.lengths[i])
        record = parse_line(raw)
        if record is None or record.get("id") != cols.id_at(i):
            raise _changed()  # only if the file was rewritten in place under us
        return record

    def _decode_many(self, positions: list[int]) -> None:
        """Decode these tasks: one pread per line (a syscall costs less than copying
        the stretches between scattered lines), parsed with one orjson call over an
        array of them (the per-call overhead is most of the cost of a small record)."""
        cols = self._cols
        decoded = self._decoded
        todo = [i for i in positions if i not in decoded]
        if not todo:
            return
        starts, lengths, fd = cols.starts, cols.lengths, self._log.fd
        try:
            raws = [os.pread(fd, lengths[i], starts[i]) for i in todo]
        except OSError:
            raise _changed() from None
        if [len(raw) for raw in raws] != [lengths[i] for i in todo]:
            raise _changed()  # the file shrank under us
        try:
            records = orjson.loads(b"[" + b",".join(raws) + b"]")
        except orjson.JSONDecodeError:  # a byte order mark, say: one line at a time
            records = None
        if (records is None or len(records) != len(todo)
                or [r.get("id") if type(r) is dict else None for r in records]
                != [cols.id_at(i) for i in todo]):
            records = [self._decode(i, raw) for i, raw in zip(todo, raws, strict=True)]
        else:
            for record in records:
                if type(record.get("tags")) is str:
                    mend_tags(record)  # the plain fold's rule (parse_line)
        decoded.update(zip(todo, records, strict=True))

    def ids_with_prefix(self, prefix: str, *, last_part: bool) -> list[str]:
        """Ids that start with `prefix`, or (`last_part`) whose part after the last `_`
        does; a search of the joined ids instead of a loop over every id."""
        if "\n" in prefix or (last_part and "_" in prefix) or not prefix:
            return [rid for rid in self if _has_prefix(rid, prefix, last_part=last_part)]
        cols = self._cols
        joined = cols.joined
        candidates: set[str] = set()
        if cols.count and joined.startswith(prefix):
            candidates.add(cols.id_at(0))
        for lead in (("\n", "_") if last_part else ("\n",)):
            needle = lead + prefix
            at = joined.find(needle)
            while at >= 0:
                start = joined.rfind("\n", 0, at + 1) + 1
                candidates.add(joined[start : joined.find("\n", at + 1)])
                at = joined.find(needle, at + 1)
        found = {rid for rid in candidates if _has_prefix(rid, prefix, last_part=last_part)}
        found.difference_update(self._deleted)
        found.update(r for r in self._over if _has_prefix(r, prefix, last_part=last_part))
        return sorted(found)

    def summaries(self, statuses: Collection[str]) -> list[tuple[str, str | None, int]]:
        """(id, priority, created_at µs) of the tasks with these statuses, in fold
        order, straight from the columns."""
        cols = self._cols
        wanted = set(statuses)
        codes = [c for c, s in enumerate(cols.table) if s is not None and s in wanted]
        shadowed = self._shadowed()
        priorities, priority_codes = cols.priorities, cols.priority_codes
        created = cols.column("created")
        found = [
            (i, (cols.id_at(i), priorities[priority_codes[i]], created[i]))
            for i in cols.positions(codes)
            if i not in shadowed
        ]
        return self._with_overlay(found, wanted, summary)

    def created_stamps(self, statuses: Collection[str] | None) -> list[int]:
        cols = self._cols
        created = cols.column("created")
        shadowed = self._shadowed()
        if statuses is None:
            found = list(created)
            for i in sorted(shadowed, reverse=True):
                del found[i]
            found.extend(ts_of(record, "created_at") for record in self._over.values())
            return found
        wanted = set(statuses)
        codes = [c for c, s in enumerate(cols.table) if s is not None and s in wanted]
        pairs = [(i, created[i]) for i in cols.positions(codes) if i not in shadowed]
        return self._with_overlay(pairs, wanted, lambda record: ts_of(record, "created_at"))

    def select(self, statuses: Collection[str], *, updated_from: int | None = None
               ) -> list[Record]:
        cols = self._cols
        wanted = set(statuses)
        codes = [c for c, s in enumerate(cols.table) if s is not None and s in wanted]
        shadowed = self._shadowed()
        if updated_from is None:
            positions = [i for i in cols.positions(codes) if i not in shadowed]
        else:  # few tasks changed recently: find those first, then their status
            chosen, status_codes = set(codes), cols.codes
            positions = [
                i for i, stamp in enumerate(cols.column("stamps"))
                if stamp >= updated_from and status_codes[i] in chosen and i not in shadowed
            ]
        with _no_gc():
            self._decode_many(positions)
        decoded = self._decoded
        found = [(i, decoded[i]) for i in positions]
        created = cols.column("created")
        for i, record in found:  # spares list's sort a parse per task
            stamp = record.get("created_at")
            if type(stamp) is str and created[i] != UNKNOWN_TS:
                remember_ts(stamp, created[i])
        if updated_from is not None and self._over:
            over = {rid for rid, record in self._over.items() if ts_of(record) < updated_from}
            return [r for r in self._with_overlay(found, wanted, lambda record: record)
                    if r.get("id") not in over]
        return self._with_overlay(found, wanted, lambda record: record)

    def _with_overlay(self, found: list[tuple[int, Any]], wanted: set[str | None],
                      convert: Callable[[Record], Any]) -> list[Any]:
        """`found` (position, value) from the columns, plus the overlay's tasks of a wanted
        status, in fold order: an overlaid id keeps its position, a new one comes last."""
        if self._over:
            cols = self._cols
            index, extra = cols.index, cols.count
            for rid, record in self._over.items():
                if status_key(record) in wanted:
                    i = index(rid)
                    if i is None:
                        i, extra = extra, extra + 1
                    found.append((i, convert(record)))
            found.sort(key=lambda pair: pair[0])
        return [value for _i, value in found]

    def tag_counts(self, statuses: Collection[str] | None) -> dict[str, int]:
        """How many tasks (with these statuses, or all) carry each tag, from the tags
        column: the tasks' tag lists are counted per distinct list, none is decoded."""
        cols = self._cols
        shadowed = self._shadowed()
        tag_codes = cols.tag_codes
        per_set: dict[int, int] = {}
        wanted = set() if statuses is None else set(statuses)
        if statuses is None:
            for code in tag_codes:
                per_set[code] = per_set.get(code, 0) + 1
            for i in shadowed:
                per_set[tag_codes[i]] -= 1
        else:
            codes = [c for c, s in enumerate(cols.table) if s is not None and s in wanted]
            for i in cols.positions(codes):
                if i not in shadowed:
                    code = tag_codes[i]
                    per_set[code] = per_set.get(code, 0) + 1
        counts: dict[str, int] = {}
        tagsets = cols.tagsets
        for code, n in per_set.items():
            if n:
                for tag in tagsets[code]:
                    counts[tag] = counts.get(tag, 0) + n
        for record in self._over.values():
            if statuses is None or status_key(record) in wanted:
                for tag in task_tags(record):
                    counts[tag] = counts.get(tag, 0) + 1
        return counts

    def status_counts(self) -> dict[str | None, int]:
        cols = self._cols
        counts: dict[str | None, int] = {}
        for code, status in enumerate(cols.table):
            n = cols.codes.count(bytes((code,)))
            if n:
                counts[status] = counts.get(status, 0) + n
        for i in self._shadowed():
            counts[cols.table[cols.codes[i]]] -= 1
        for record in self._over.values():
            key = status_key(record)
            counts[key] = counts.get(key, 0) + 1
        return {status: n for status, n in counts.items() if n}


class LazyKeys(_Lazy):
    """`Fold.task_keys`, from the columns."""

    def _base(self, i: int) -> FoldKey:
        return self._cols.key(i)


