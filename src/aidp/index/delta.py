"""The next snapshot after appends: `_Delta` folds the lines after a snapshot on top of
it and rewrites only the sections the tasks those lines name are in (`_merge_group`),
copying the rest, so the cost follows the lines added, not the size of the history.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from functools import partial
from operator import itemgetter
from typing import Any

from aidp.index import listing
from aidp.index.build import _Builder, queue_section
from aidp.index.columns import (
    Base,
    Group,
    Loc,
    _joined,
    bucket_of,
    parts_section,
)
from aidp.insights import week_start
from aidp.model import UNKNOWN_TS


def _merge_group(old: Group | None, drop: list[int], add: list[tuple[Any, ...]]
                 ) -> Iterator[bytes | memoryview]:
    """The section of `old` without the tasks at rows `drop`, with the entries `add`
    (row, id, then the columns in Group order), in row order: slices of the old columns
    copied whole, so the cost is the changes plus a copy, not a loop over every task."""
    from bisect import bisect_left

    rows = old.rows if old is not None else memoryview(b"").cast("q")
    added = sorted(add, key=itemgetter(0))
    events: list[tuple[int, int, int]] = []  # (position in old, 0 insert / 1 drop, index)
    for n, entry in enumerate(added):
        events.append((bisect_left(rows, entry[0]), 0, n))
    for row in drop:
        at = bisect_left(rows, row)
        if at < len(rows) and rows[at] == row:
            events.append((at, 1, 0))
    events.sort()
    kinds = ("q",) * 7 + ("i", "B", "B")
    olds: list[Any] = [] if old is None else [
        old.rows, old.starts, old.lengths, old.stamps, old.numbers, old.created,
        old.finished, old.tags, old.statuses, old.priorities]
    columns: list[Any] = [array(kind) if kind != "B" else bytearray() for kind in kinds]
    ids: list[str] = []

    old_ids = old.ids if old is not None else []

    def copy(start: int, stop: int) -> None:
        ids.extend(old_ids[start:stop])
        for column, source in zip(columns, olds, strict=True):
            if isinstance(column, array):
                column.frombytes(source[start:stop].cast("B"))
            else:
                column.extend(source[start:stop])

    at = 0
    for position, kind, n in events:
        if position > at:
            copy(at, position)
            at = position
        if kind == 0:
            entry = added[n]
            ids.append(entry[1])
            columns[0].append(entry[0])
            for column, value in zip(columns[1:], entry[2:], strict=True):
                column.append(value)
        else:
            at = position + 1
    if at < len(rows):
        copy(at, len(rows))
    yield from parts_section([_joined(ids).encode(),
                              *(bytes(c) if isinstance(c, bytearray) else c.tobytes()
                                for c in columns)])


class _Later:
    """A listing pair made when its first section is written (it reads the old one)."""

    def __init__(self, make: Callable[[], listing.Pair]) -> None:
        self.make = make
        self.pair: listing.Pair | None = None

    def elements(self) -> listing.Pieces:
        pair = self.pair = self.make()
        return pair.elements()

    def head(self) -> bytes:
        if self.pair is None:
            raise AssertionError("a listing's elements are written before its head")
        return self.pair.head()


class _Delta(_Builder):
    """Folds the lines after a snapshot on top of it, keeping only the tasks those lines
    name (brought in from the base when first named), and writes the next snapshot by
    changing only the sections those tasks are in: the cost follows the lines added,
    not the size of the history."""

    def __init__(self, base: Base) -> None:
        super().__init__()
        self.base = base
        self.take_tables(base)
        self.old: dict[int, Loc] = {}  # local index -> where the task is in the base

    def _adopter(self) -> Callable[[str], int | None] | None:
        return self._adopt

    def _adopt(self, rid: str) -> int | None:
        if "\n" in rid:
            self.overflow = True  # never a task (well_typed_task); the caller folds in full
            return None
        loc = self.base.locate(rid)
        if loc is None:
            return None
        group, j = loc
        local = len(self.stamps)
        self.rows[rid] = local
        self.old[local] = loc
        self.stamps.append(group.stamps[j])
        self.numbers.append(group.numbers[j])
        self.starts.append(group.starts[j])
        self.lengths.append(group.lengths[j])
        self.created.append(group.created[j])
        self.finished.append(group.finished[j])
        self.status_codes.append(group.statuses[j])
        self.priority_codes.append(group.priorities[j])
        self.tag_codes.append(group.tags[j])
        return local

    def _release(self, name: str) -> Group:
        """The base's group `name`, no longer kept by the base (memory stays flat)."""
        found = self.base._groups.pop(name, None)
        return found if found is not None else self.base.new_group(name)

    def _merge_released(self, name: str, drop: list[int], add: list[tuple[Any, ...]]
                        ) -> Iterator[bytes | memoryview]:
        return _merge_group(self._release(name), drop, add)

    def _merge_listing(self, code: int, drop: list[int], add: list[tuple[Any, ...]]
                       ) -> listing.Pair:
        """The listing of status `code` (listing.py) without the tasks at rows `drop`,
        with the entries `add` (as for _merge_group); each added task's element is made
        from its winning line, read back from the log."""
        old: listing.Listing | None = None
        if code < len(self.base.table):
            old = listing.load(self.base.raw(f"h{code}"), partial(self.base.raw, f"j{code}"))
            if old is None:
                return listing.Pair(None)  # it had no elements: nor can this
        fd = self.fd
        if fd is None:
            return listing.Pair(None)
        entries = [(listing.order_key(entry[6], entry[0]), entry[1], entry[0], entry[6],
                    partial(listing._line_element, fd, entry[1], entry[2], entry[3]))
                   for entry in add]
        return listing.merge(old, drop, entries)

    def merged(self, snap: Any) -> list[tuple[str, Any]] | None:
        """The next snapshot's sections: meta and typed anew, the status sections and id
        buckets holding a named task merged, every other section copied unchanged from
        `snap` (the base's SnapshotFile). None: columns cannot hold the state."""
        import marshal

        if self.overflow:
            return None
        base = self.base
        meta_weeks = {kind: dict(counts) for kind, counts in base.weeks.items()}
        by_status = dict(base.by_status)
        tag_sets = dict(base.tag_sets)
        prio_sets = dict(base.prio_sets)
        next_row = base.count
        drop_status: dict[int, list[int]] = {}
        drop_bucket: dict[int, list[int]] = {}
        add_status: dict[int, list[tuple[Any, ...]]] = {}
        add_bucket: dict[int, list[tuple[Any, ...]]] = {}

        def count(table: dict[Any, int], key: Any, n: int) -> None:
            table[key] = table.get(key, 0) + n

        for rid, local in self.rows.items():
            bucket = bucket_of(rid, base.buckets)
            loc = self.old.get(local)
            if loc is None:
                row, next_row = next_row, next_row + 1
            else:
                group, j = loc
                row = group.rows[j]
                code = group.statuses[j]
                count(by_status, code, -1)
                count(tag_sets, (code, group.tags[j]), -1)
                count(prio_sets, (code, group.priorities[j]), -1)
                for kind, column in (("created", group.created), ("finished", group.finished)):
                    if column[j] != UNKNOWN_TS:
                        count(meta_weeks[kind], (code, week_start(column[j])), -1)
                drop_status.setdefault(code, []).append(row)
                drop_bucket.setdefault(bucket, []).append(row)
            code = self.status_codes[local]
            count(by_status, code, 1)
            count(tag_sets, (code, self.tag_codes[local]), 1)
            count(prio_sets, (code, self.priority_codes[local]), 1)
            for kind, stamp in (("created", self.created[local]),
                                ("finished", self.finished[local])):
                if stamp != UNKNOWN_TS:
                    count(meta_weeks[kind], (code, week_start(stamp)), 1)
            entry = (row, rid, self.starts[local], self.lengths[local], self.stamps[local],
                     self.numbers[local], self.created[local], self.finished[local],
                     self.tag_codes[local], code, self.priority_codes[local])
            add_status.setdefault(code, []).append(entry)
            add_bucket.setdefault(bucket, []).append(entry)
        meta = {
            "lines": self.lines, "damaged": self.damaged, "count": next_row,
            "statuses": self.tables[0], "priorities": self.tables[1],
            "tagsets": self.tagsets, "buckets": base.buckets,
            "by_status": by_status,
            "tag_sets": {key: n for key, n in tag_sets.items() if n},
            "prio_sets": {key: n for key, n in prio_sets.items() if n},
            "weeks": {kind: {key: n for key, n in counts.items() if n}
                      for kind, counts in meta_weeks.items()},
        }
        out: list[tuple[str, Any]] = [("meta", marshal.dumps(meta)),
                                      ("typed", marshal.dumps((self.typed, self.typed_keys))),
                                      ("queue", partial(queue_section, self.typed,
                                                        self.typed_keys)),
                                      ("queue_keys", partial(queue_section, self.typed,
                                                             self.typed_keys, keys=True))]
        for code in range(len(self.tables[0])):
            name = f"s{code}"
            if code in drop_status or code in add_status or code >= len(base.table):
                drop, add = drop_status.get(code, []), add_status.get(code, [])
                out.append((name, partial(self._merge_released, name, drop, add)
                            if code < len(base.table) else partial(_merge_group, None, drop, add)))
            else:
                out.append((name, snap.copy(name)))
        for code, status in enumerate(self.tables[0]):
            if status not in listing.LISTED:
                continue
            if code in drop_status or code in add_status or code >= len(base.table):
                pair = _Later(partial(self._merge_listing, code, drop_status.get(code, []),
                                      add_status.get(code, [])))
                out += [(f"j{code}", pair.elements), (f"h{code}", pair.head)]
            else:
                out += [(f"j{code}", snap.copy(f"j{code}")), (f"h{code}", snap.copy(f"h{code}"))]
        for bucket in range(base.buckets):
            name = f"b{bucket}"
            if bucket in add_bucket:
                out.append((name, partial(self._merge_released, name,
                                          drop_bucket.get(bucket, []), add_bucket[bucket])))
            else:
                out.append((name, snap.copy(name)))
        return out
