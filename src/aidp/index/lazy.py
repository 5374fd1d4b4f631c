"""`Fold.tasks` of a snapshot-backed `Fold` (the mapping itself: `index/mapping.py`).

Entries come from the snapshot's sections (`columns.Base`); lines folded on top (the
overlay) replace or add entries. A task is decoded from its line in the log when
first asked for, read with pread (never a memory map: another program truncating a
mapped file would kill the reader with SIGBUS), and checked to be the task the
snapshot said is there. Counts come from the snapshot's meta section, corrected for
the tasks the overlay replaced: none of them reads a task.
"""

from __future__ import annotations

import gc
import os
import sys
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from aidp.errors import StorageError
from aidp.fold import mend_tags, parse_line, task_tags
from aidp.index.columns import finished_stamp, status_key, summary, week_of
from aidp.index.mapping import _Lazy
from aidp.model import UNKNOWN_TS, remember_ts, ts_of

if TYPE_CHECKING:
    from aidp.index.columns import Base, Group, Loc
    from aidp.index.listing import Listed, Listing
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


def _first_index(column: memoryview[int], value: int) -> int:
    """The first position of `value` in a column of int64 (a C search of its bytes,
    not a list of 50k ints): the first aligned match."""
    data, needle = column.tobytes(), value.to_bytes(8, sys.byteorder, signed=True)
    at = data.find(needle)
    while at > 0 and at % 8:
        at = data.find(needle, at + 1)
    if at < 0:
        raise ValueError(f"{value} is not in the column")
    return at // 8


STREAM_BATCH = 4096  # tasks decoded at a time by newest_first (tests make it small)


def _negative(value: int) -> int:
    return -value


def _has_prefix(rid: str, prefix: str, *, last_part: bool) -> bool:
    return (rid.rpartition("_")[2] if last_part else rid).startswith(prefix)


class LazyTasks(_Lazy):
    """`Fold.tasks`: a task is decoded from its line in the log when first asked for."""

    def __init__(self, base: Base, log: LogFile) -> None:
        super().__init__(base)
        self._log = log
        self._decoded: dict[int, Record] = {}  # by row

    def _base(self, loc: Loc) -> Record:
        group, j = loc
        row = group.rows[j]
        record = self._decoded.get(row)
        if record is None:
            record = self._decoded[row] = self._decode(group, j)
        return record

    def _decode(self, group: Group, j: int, raw: bytes | None = None) -> Record:
        if raw is None:
            start = group.starts[j]
            try:
                raw = self._log.read(start, start + group.lengths[j])
            except OSError:  # Changed (it shrank), or the disk failing under us
                raise _changed() from None
        record = parse_line(raw)
        if record is None or record.get("id") != group.ids[j]:
            raise _changed()  # only if the file was rewritten in place under us
        return record

    def _decode_many(self, group: Group, positions: list[int]) -> list[Record]:
        """The tasks at these positions of `group`: one pread per line (a syscall costs
        less than copying the stretches between scattered lines), parsed with one
        orjson call over an array of them (the per-call overhead is most of the cost of
        a small record)."""
        decoded = self._decoded
        rows = group.rows
        todo = [j for j in positions if rows[j] not in decoded]
        if todo:
            records = self._read_many(group, todo)
            created = group.created
            for j, record in zip(todo, records, strict=True):
                decoded[rows[j]] = record
                stamp = record.get("created_at")  # spares list's sort a parse per task
                if type(stamp) is str and created[j] != UNKNOWN_TS:
                    remember_ts(stamp, created[j])
        return [decoded[rows[j]] for j in positions]

    def _read_many(self, group: Group, todo: list[int]) -> list[Record]:
        """The tasks at positions `todo` of `group`, read and decoded (not kept)."""
        starts, lengths, fd = group.starts, group.lengths, self._log.fd
        try:
            raws = [os.pread(fd, lengths[j], starts[j]) for j in todo]
        except OSError:
            raise _changed() from None
        if [len(raw) for raw in raws] != [lengths[j] for j in todo]:
            raise _changed()  # the file shrank under us
        try:
            records = orjson.loads(b"[" + b",".join(raws) + b"]")
        except orjson.JSONDecodeError:  # a byte order mark, say: one line at a time
            records = None
        ids = group.ids
        if (records is None or len(records) != len(todo)
                or [r.get("id") if type(r) is dict else None for r in records]
                != [ids[j] for j in todo]):
            return [self._decode(group, j, raw) for j, raw in zip(todo, raws, strict=True)]
        for record in records:
            if type(record.get("tags")) is str:
                mend_tags(record)  # the plain fold's rule (parse_line)
        return records  # type: ignore[no-any-return]

    def newest_first(self, batch: int | None = None) -> Iterator[list[Record]]:
        """Every task in `tasks list`'s default order (newest created first; equal
        stamps: later in the fold first), a batch at a time, none of them kept: `list
        --all` at 1M events writes 423k tasks in bounded memory."""
        base = self._b
        shadowed = self._shadowed()
        groups = [(code, base.status_group(code)) for code in base.codes(None)
                  if base.by_status.get(code)]
        # One int per task orders them: created, then row (< 2**40), then the group.
        keys: list[int] = []
        for n, (_code, group) in enumerate(groups):
            rows, created = group.rows, group.created
            keys.extend((created[j] << 48 | rows[j] << 8 | n)
                        for j in range(len(rows)) if rows[j] not in shadowed)
        over: dict[int, Record] = {}
        locate, new_row = base.locate, base.count
        for rid, record in self._over.items():
            loc = locate(rid)
            if loc is None:
                row, new_row = new_row, new_row + 1
            else:
                row = loc[0].rows[loc[1]]
            over[row] = record
            keys.append(ts_of(record, "created_at") << 48 | row << 8 | 255)
        keys.sort(reverse=True)
        from bisect import bisect_left

        batch = batch or STREAM_BATCH
        for at in range(0, len(keys), batch):
            chunk = keys[at:at + batch]
            wanted: dict[int, list[int]] = {}
            for key in chunk:
                n = key & 255
                if n != 255:
                    group = groups[n][1]
                    wanted.setdefault(n, []).append(
                        bisect_left(group.rows, (key >> 8) & (1 << 40) - 1))
            found: dict[tuple[int, int], Record] = {}
            for n, positions in wanted.items():
                group = groups[n][1]
                positions.sort()
                for j, record in zip(positions, self._read_many(group, positions), strict=True):
                    found[n, group.rows[j]] = record
            yield [over[row] if n == 255 else found[n, row]
                   for key in chunk
                   for n, row in ((key & 255, (key >> 8) & (1 << 40) - 1),)]

    def listing(self, statuses: Collection[str]) -> Listed | None:
        """The tasks with these statuses in `tasks list`'s default order, as elements
        of its JSON output, from the snapshot's listing sections and the overlay; None
        when a status has no listing (only open ones do) or a section could not hold
        its tasks."""
        from aidp.index import listing

        if not set(statuses) <= listing.LISTED:
            return None
        base = self._b
        shadowed: dict[int, set[int]] = {}
        for group, j in self._shadowed_in(statuses):
            shadowed.setdefault(group.statuses[j], set()).add(group.rows[j])
        sources: list[tuple[listing.Listing, str, set[int]]] = []
        for code in base.codes(statuses):
            found = listing.load(base.raw(f"h{code}"), partial(base.raw, f"j{code}"))
            status = base.table[code]
            if found is None or status is None:
                return None
            sources.append((found, status, shadowed.get(code, set())))
        extra: list[tuple[tuple[int, int], str, str, bytes, bool]] = []
        locate, new_row = base.locate, base.count
        wanted = set(statuses)
        for rid, record in self._over.items():
            status = status_key(record)
            if status is not None and status in wanted:
                loc = locate(rid)
                if loc is None:
                    row, new_row = new_row, new_row + 1
                else:
                    row = loc[0].rows[loc[1]]
                try:
                    item = listing.element(record)
                except (orjson.JSONEncodeError, OverflowError):
                    return None
                extra.append((listing.order_key(ts_of(record, "created_at"), row), rid,
                              status, item, not listing.QUEUE_KEYS.isdisjoint(record)))
        return listing.merged(sources, extra)

    def ids_with_prefix(self, prefix: str, *, last_part: bool) -> list[str]:
        """Ids that start with `prefix`, or (`last_part`) whose part after the last `_`
        does: one id bucket is read, not every id."""
        found = set(self._b.ids_with_prefix(prefix, last_part=last_part))
        found.difference_update(self._deleted)
        found.update(r for r in self._over if _has_prefix(r, prefix, last_part=last_part))
        return sorted(found)

    def _positions(self, group: Group, shadowed: set[int],
                   keep: Callable[[int], bool] | None = None) -> list[int]:
        rows = group.rows
        if keep is None:
            if not shadowed:
                return list(range(len(rows)))
            return [j for j in range(len(rows)) if rows[j] not in shadowed]
        return [j for j in range(len(rows)) if keep(j) and rows[j] not in shadowed]

    def _column(self, statuses: Collection[str] | None, name: str) -> list[int]:
        """One column's values for the base tasks with these statuses, not shadowed, in
        no particular order: whole columns copied where nothing is shadowed."""
        base = self._b
        shadowed = self._shadowed()
        out: list[int] = []
        for code in base.codes(statuses):
            if not base.by_status.get(code):
                continue
            group = base.status_group(code)
            column = getattr(group, name)
            if shadowed:
                out.extend(column[j] for j in self._positions(group, shadowed))
            else:
                out.extend(column.tolist())
        return out

    def priority_counts(self, statuses: Collection[str]) -> dict[str | None, int]:
        """From the counts per (status, priority) in meta, corrected by the overlay."""
        base = self._b
        codes = set(base.codes(statuses))
        by_code: dict[int, int] = {}
        for (code, p), n in base.prio_sets.items():
            if code in codes:
                by_code[p] = by_code.get(p, 0) + n
        for group, j in self._shadowed_in(statuses):
            by_code[group.priorities[j]] -= 1
        counts: dict[str | None, int] = {}
        for p, n in by_code.items():
            if n:
                key = base.priorities[p]
                counts[key] = counts.get(key, 0) + n
        for record in self._overlay_records(statuses):
            key = summary(record)[1]
            counts[key] = counts.get(key, 0) + 1
        return counts

    def _heads(self, statuses: Collection[str]) -> list[Listing] | None:
        """The listing heads of these statuses (open ones only have them): their tasks'
        created stamps in list's order, newest first."""
        from aidp.index import listing

        if not set(statuses) <= listing.LISTED:
            return None
        heads = []
        for code in self._b.codes(statuses):
            found = listing.load(self._b.raw(f"h{code}"))
            if found is None:
                return None
            heads.append(found)
        return heads

    def created_at_most(self, statuses: Collection[str], bounds: list[int]
                        ) -> tuple[int, list[int]] | None:
        """How many tasks with these statuses there are, and how many were created at
        or before each bound (µs) — from the listing heads; None without them."""
        heads = self._heads(statuses)
        if heads is None:
            return None
        total, counts = 0, [0] * len(bounds)
        for head in heads:
            created = head.created
            total += len(created)
            for n, bound in enumerate(bounds):  # newest first: the later ones are older
                counts[n] += len(created) - bisect_left(created, -bound, key=_negative)
        stamps = [group.created[j] for group, j in self._shadowed_in(statuses)]
        stamps += [ts_of(record, "created_at") for record in self._overlay_records(statuses)]
        gone = len(self._shadowed_in(statuses))
        for n, stamp in enumerate(stamps):
            sign = -1 if n < gone else 1
            total += sign
            for k, bound in enumerate(bounds):
                if stamp <= bound:
                    counts[k] += sign
        return total, counts

    def oldest(self, statuses: Collection[str]) -> str | None:
        """The first task in fold order among those (with these statuses) with the
        smallest created_at µs; None when there is none."""
        base = self._b
        shadowed = self._shadowed()
        best: tuple[int, int, str] | None = None  # (created, row, id)
        heads = self._heads(statuses)
        for head in heads or ():  # list's order ends with the oldest, first in the fold
            for k in range(len(head) - 1, -1, -1):
                if head.rows[k] not in shadowed:
                    candidate = (head.created[k], head.rows[k], head.id_at(k))
                    if best is None or candidate[:2] < best[:2]:
                        best = candidate
                    break
        for code in base.codes(statuses) if heads is None else ():
            if not base.by_status.get(code):
                continue
            group = base.status_group(code)
            created = group.created
            if shadowed:
                positions = self._positions(group, shadowed)
                if not positions:
                    continue
                j = min(positions, key=created.__getitem__)  # the first of the smallest
            elif len(created):
                j = _first_index(created, min(created))
            else:
                continue
            candidate = (created[j], group.rows[j], group.id_at(j))
            if best is None or candidate[:2] < best[:2]:
                best = candidate
        locate, extra = self._b.locate, self._b.count
        wanted = set(statuses)
        for rid, record in self._over.items():
            if status_key(record) in wanted:
                loc = locate(rid)
                if loc is None:
                    row, extra = extra, extra + 1
                else:
                    row = loc[0].rows[loc[1]]
                candidate = (ts_of(record, "created_at"), row, rid)
                if best is None or candidate[:2] < best[:2]:
                    best = candidate
        return None if best is None else best[2]

    def _collect(self, statuses: Collection[str] | None,
                 value: Callable[[Group, list[int]], list[Any]],
                 keep: Callable[[Group], Callable[[int], bool] | None] | None = None
                 ) -> list[tuple[int, Any]]:
        """(row, value) of the base tasks with these statuses, not shadowed, in row order."""
        base = self._b
        shadowed = self._shadowed()
        found: list[tuple[int, Any]] = []
        codes = base.codes(statuses)
        for code in codes:
            if not base.by_status.get(code):
                continue
            group = base.status_group(code)
            positions = self._positions(group, shadowed, keep(group) if keep else None)
            rows = group.rows
            found.extend(zip([rows[j] for j in positions], value(group, positions),
                             strict=True))
        if len(codes) > 1:
            found.sort(key=lambda pair: pair[0])
        return found

    def summaries(self, statuses: Collection[str]) -> list[tuple[str, str | None, int]]:
        """(id, priority, created_at µs) of the tasks with these statuses, in fold
        order, from the status sections."""
        table = self._b.priorities

        def value(group: Group, positions: list[int]) -> list[Any]:
            ids, codes, created = group.ids, group.priorities, group.created
            return [(ids[j], table[codes[j]], created[j]) for j in positions]

        found = self._collect(statuses, value)
        return self._with_overlay(found, set(statuses), summary)

    def created_stamps(self, statuses: Collection[str] | None) -> list[int]:
        found = self._column(statuses, "created")
        found.extend(ts_of(record, "created_at") for record in self._overlay_records(statuses))
        return found

    def select(self, statuses: Collection[str], *, updated_from: int | None = None
               ) -> list[Record]:
        def keep(group: Group) -> Callable[[int], bool] | None:
            if updated_from is None:
                return None
            stamps = group.stamps
            return lambda j: stamps[j] >= updated_from

        with _no_gc():
            found = self._collect(statuses, self._decode_many, keep)
        if updated_from is not None and self._over:
            over = {rid for rid, record in self._over.items() if ts_of(record) < updated_from}
            return [r for r in self._with_overlay(found, set(statuses), lambda record: record)
                    if r.get("id") not in over]
        return self._with_overlay(found, set(statuses), lambda record: record)

    def _with_overlay(self, found: list[tuple[int, Any]], wanted: set[str],
                      convert: Callable[[Record], Any]) -> list[Any]:
        """`found` (row, value) from the base, plus the overlay's tasks of a wanted status,
        in fold order: an overlaid id keeps its row, a new one comes last."""
        if self._over:
            locate, extra = self._b.locate, self._b.count
            for rid, record in self._over.items():
                if status_key(record) in wanted:
                    loc = locate(rid)
                    if loc is None:
                        row, extra = extra, extra + 1
                    else:
                        row = loc[0].rows[loc[1]]
                    found.append((row, convert(record)))
            found.sort(key=lambda pair: pair[0])
        return [value for _row, value in found]

    def _overlay_records(self, statuses: Collection[str] | None) -> Iterator[Record]:
        wanted = None if statuses is None else set(statuses)
        for record in self._over.values():
            if wanted is None or status_key(record) in wanted:
                yield record

    def _shadowed_in(self, statuses: Collection[str] | None) -> list[Loc]:
        codes = set(self._b.codes(statuses))
        return [(g, j) for g, j in self._shadowed_locs() if g.statuses[j] in codes]

    def tag_counts(self, statuses: Collection[str] | None) -> dict[str, int]:
        """How many tasks (with these statuses, or all) carry each tag: from the counts
        in the snapshot's meta section, corrected by the overlay; none is decoded."""
        base = self._b
        codes = set(base.codes(statuses))
        per_set: dict[int, int] = {}
        for (code, tags), n in base.tag_sets.items():
            if code in codes:
                per_set[tags] = per_set.get(tags, 0) + n
        for group, j in self._shadowed_in(statuses):
            per_set[group.tags[j]] -= 1
        counts: dict[str, int] = {}
        for tags, n in per_set.items():
            if n:
                for tag in base.tagsets[tags]:
                    counts[tag] = counts.get(tag, 0) + n
        for record in self._overlay_records(statuses):
            for tag in task_tags(record):
                counts[tag] = counts.get(tag, 0) + 1
        return counts

    def week_counts(self, kind: str, statuses: Collection[str] | None) -> dict[int, int]:
        """How many tasks (with these statuses, or all) were created (kind "created") or
        finished ("finished") in each week: from the snapshot's meta section."""
        base = self._b
        codes = set(base.codes(statuses))
        counts: dict[int, int] = {}
        for (code, week), n in base.weeks[kind].items():
            if code in codes:
                counts[week] = counts.get(week, 0) + n
        for group, j in self._shadowed_in(statuses):
            gone = week_of((group.created if kind == "created" else group.finished)[j])
            if gone is not None:
                counts[gone] -= 1
        for record in self._overlay_records(statuses):
            stamp = ts_of(record, "created_at") if kind == "created" else finished_stamp(record)
            added = week_of(stamp)
            if added is not None:
                counts[added] = counts.get(added, 0) + 1
        return {week: n for week, n in counts.items() if n}

    def status_counts(self) -> dict[str | None, int]:
        base = self._b
        counts: dict[str | None, int] = {}
        for code, n in base.by_status.items():
            if n:
                status = base.table[code]
                counts[status] = counts.get(status, 0) + n
        for group, j in self._shadowed_locs():
            counts[base.table[group.statuses[j]]] -= 1
        for record in self._over.values():
            key = status_key(record)
            counts[key] = counts.get(key, 0) + 1
        return {status: n for status, n in counts.items() if n}
