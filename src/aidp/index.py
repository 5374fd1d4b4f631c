"""The folded state of a log, from a snapshot brought up to date incrementally.

A full fold parses every line and builds a dict per task: about a second and 150 MB
at 100,000 events. Commands run many times a minute, so reads go through a derived
snapshot under `.aidp/cache/` (git-ignored, rebuilt whenever in doubt):

- It covers a prefix of the log that ends at a newline (`offset`), never a torn last
  line: that one is re-read on every call until its newline arrives.
- It keeps no task dicts, only columns per winning task: id, status, fold key and
  where its line sits in the log. A task is decoded from the log (mmap) when asked
  for, so `list --status pending` decodes the pending tasks only and `show` one.
- On load it is checked against the log before it is trusted: sampled regions of the
  prefix always; the whole prefix (crc32) whenever the file is not the same inode grown
  by appends — git checkout/merge/rebase, repair and compact all write a new file — and
  when the stat data is unchanged but was "racily clean" (the file changed within
  `RACY_NS` of the snapshot being built, when a same-size rewrite can hide behind an
  equal mtime). A failed check means a full rebuild, never a wrong answer.
- Lines appended since it was built are folded on top (an overlay); once they pass
  `REBUILD_TAIL` bytes (more for big logs) the snapshot is rewritten (temp file +
  rename, last writer wins). A corrupt, truncated, foreign-version or missing snapshot is rebuilt; a
  read-only `.aidp/` is read without one. Nothing here prints.

`load(log)` returns a `Fold` whose fields mean exactly what `log.full_fold()`'s do
(tests/test_index.py checks that property); `select` and `status_counts` answer the
common queries without decoding every task.
"""

from __future__ import annotations

import gc
import marshal
import os
import struct
import sys
import time
import zlib
from array import array
from collections.abc import Callable, Collection, Iterator, MutableMapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import orjson

from aidp.log import Fold, fold_bytes, parse_line
from aidp.model import remember_ts, ts_of

if TYPE_CHECKING:
    from pathlib import Path

    from aidp.log import FoldKey, TaskLog
    from aidp.model import Record

VERSION = 3
CACHE_DIR = "cache"
SNAPSHOT_NAME = "fold.snapshot"
MAGIC = b"aidpfold"
_HEADER = struct.Struct("<8sIIQIQI")  # magic, version, python, head len/crc, body len/crc

# Below this size a full fold costs less than loading and checking a snapshot.
MIN_BYTES = 32 * 1024
# Rewrite the snapshot once this many bytes were appended after it, or more for a big
# log (see _rebuild_tail): every read folds the tail; a rewrite costs the whole snapshot.
REBUILD_TAIL = 64 * 1024
# A change this close to the snapshot's build time may hide behind equal stat data.
RACY_NS = 2_000_000_000
SAMPLE_BYTES = 4096
SAMPLE_COUNT = 16
_CHUNK = 4 << 20  # rebuilds and full checks read this much at a time
# Tests set this: a bug in the snapshot path must fail them, not fall back silently.
_STRICT = False
_UNREADABLE = ts_of({})  # what ts_of gives a missing or unreadable timestamp
_OTHER = None  # the status key of a task whose status is missing or not a string


def load(log: TaskLog) -> Fold:
    """The folded state of `log`, the same as `log.full_fold()`."""
    try:
        fd = os.open(log.path, os.O_RDONLY)
    except OSError:
        return log.full_fold()  # missing: empty; unreadable: its StorageError
    try:
        st = os.fstat(fd)
        if st.st_size < max(MIN_BYTES, 1) or not _regular(st):
            return log.full_fold()
        try:
            return _Loader(log, fd, st).load()
        except Exception:
            if _STRICT:
                raise
            return log.full_fold()
    finally:
        os.close(fd)


def select(fold: Fold, statuses: Collection[str]) -> list[Record]:
    """The tasks whose status is one of `statuses`, in the fold's order."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.select(statuses)
    wanted = set(statuses)
    return [t for t in tasks.values() if _status_key(t) in wanted]


def status_counts(fold: Fold) -> dict[str | None, int]:
    """How many tasks have each status (None: missing or not a string)."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.status_counts()
    counts: dict[str | None, int] = {}
    for task in tasks.values():
        key = _status_key(task)
        counts[key] = counts.get(key, 0) + 1
    return counts


def summaries(fold: Fold, statuses: Collection[str]) -> list[tuple[str, str | None, int]]:
    """(id, priority, created_at µs) of the tasks whose status is one of `statuses`, in
    the fold's order; priority is None when missing or not a string."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.summaries(statuses)
    wanted = set(statuses)
    return [_summary(t) for t in tasks.values() if _status_key(t) in wanted]


def created_stamps(fold: Fold, statuses: Collection[str] | None = None) -> list[int]:
    """created_at µs (ts_of's value when unreadable) of every task, or of those whose
    status is one of `statuses`, in no particular order; an indexed fold answers from
    its columns."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.created_stamps(statuses)
    wanted = None if statuses is None else set(statuses)
    return [ts_of(t, "created_at") for t in tasks.values()
            if wanted is None or _status_key(t) in wanted]


def select_updated(fold: Fold, statuses: Collection[str], since: int) -> list[Record]:
    """The tasks whose status is one of `statuses` and whose winning record was updated
    at or after `since` (µs), in the fold's order; an indexed fold decodes only those."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.select(statuses, updated_from=since)
    wanted = set(statuses)
    return [t for t in tasks.values() if _status_key(t) in wanted and ts_of(t) >= since]


def _summary(record: Record) -> tuple[str, str | None, int]:
    return (record["id"], _key(record.get("priority")), ts_of(record, "created_at"))


def _has_prefix(rid: str, prefix: str, *, last_part: bool) -> bool:
    return (rid.rpartition("_")[2] if last_part else rid).startswith(prefix)


@contextmanager
def _no_gc() -> Iterator[None]:
    """Decoding thousands of acyclic dicts triggers collections that find nothing, and
    the first collection afterwards would still walk them all: freeze what exists
    (reference counting frees it as usual; only the cycle collector skips it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _status_key(record: Record) -> str | None:
    status = record.get("status")
    return status if isinstance(status, str) else _OTHER


def _regular(st: os.stat_result) -> bool:
    import stat

    return stat.S_ISREG(st.st_mode)


# --- columns: what the snapshot holds ------------------------------------------------


class _Columns:
    """The winning task per id, as columns, plus the (few) typed records in full.

    Ids are one joined string with an open-addressing hash table over it (crc32 of
    the id, linear probing), so a lookup costs microseconds without building a dict
    of every id. Status, priority and created_at are columns too, so counts and
    stats never decode a task.
    """

    def __init__(self, body: tuple[Any, ...]) -> None:
        (
            self.lines,
            self.damaged,
            self.joined,  # "\n".join(ids) + "\n", in the fold's dict order
            id_starts,  # where each id starts in `joined`, and one past the end
            slots,  # hash table: index + 1 of the id in each slot, 0 when empty
            self.table,  # status keys; `codes` index it
            self.codes,  # bytes: one status code per task
            self.priorities,  # priority keys; `priority_codes` index it
            self.priority_codes,
            starts,  # the winning line of each task: offset and length in the log
            lengths,
            stamps,  # the fold key: updated_at µs and line number
            numbers,
            created,  # created_at µs
            self.typed,
            self.typed_keys,
        ) = body
        self.count = len(self.codes)
        self.id_starts = _array(id_starts)
        self.slots = _array(slots, "i")
        self.mask = len(self.slots) - 1
        self.starts = _array(starts)
        self.lengths = _array(lengths)
        self._raw = {"stamps": stamps, "numbers": numbers, "created": created}
        self._arrays: dict[str, array[int]] = {}
        self._ids: list[str] | None = None

    def column(self, name: str) -> array[int]:
        found = self._arrays.get(name)
        if found is None:
            found = self._arrays[name] = _array(self._raw[name])
        return found

    def body(self) -> tuple[Any, ...]:
        return (
            self.lines, self.damaged, self.joined, self.id_starts.tobytes(),
            self.slots.tobytes(), self.table, self.codes, self.priorities,
            self.priority_codes, self.starts.tobytes(), self.lengths.tobytes(),
            self._raw["stamps"], self._raw["numbers"], self._raw["created"],
            self.typed, self.typed_keys,
        )

    def ids(self) -> list[str]:
        if self._ids is None:
            self._ids = self.joined[:-1].split("\n") if self.count else []
        return self._ids

    def id_at(self, i: int) -> str:
        return self.joined[self.id_starts[i] : self.id_starts[i + 1] - 1]

    def key(self, i: int) -> FoldKey:
        return (self.column("stamps")[i], self.column("numbers")[i])

    def index(self, rid: str) -> int | None:
        """Where `rid` is in the columns, or None."""
        if not self.count:
            return None
        slots, mask, joined, id_starts = self.slots, self.mask, self.joined, self.id_starts
        slot = _hash(rid) & mask
        while True:
            found = slots[slot]
            if not found:
                return None
            i = found - 1
            if joined[id_starts[i] : id_starts[i + 1] - 1] == rid:
                return i
            slot = (slot + 1) & mask

    def positions(self, codes: Collection[int]) -> list[int]:
        found: list[int] = []
        for code in codes:
            needle = bytes((code,))
            at = self.codes.find(needle)
            while at >= 0:
                found.append(at)
                at = self.codes.find(needle, at + 1)
        found.sort()
        return found


def _hash(rid: str) -> int:
    return zlib.crc32(rid.encode("utf-8", "surrogatepass"))


def _array(data: bytes, kind: str = "q") -> array[int]:
    values = array(kind)
    values.frombytes(data)
    return values


def _key(value: object) -> str | None:
    """Status and priority as columns hold them: the string, or None for anything else."""
    return value if isinstance(value, str) else None


class _Builder:
    """Folds lines into columns without keeping task dicts: the same decisions as
    `Fold.add_line`/`add_record`, with far less memory."""

    def __init__(self) -> None:
        # id -> [updated_at µs, line, start, length, status, priority, created_at µs]
        self.entries: dict[str, list[Any]] = {}
        self.typed: dict[str, Record] = {}
        self.typed_keys: dict[str, FoldKey] = {}
        self.lines = 0
        self.damaged = 0

    @classmethod
    def from_columns(cls, cols: _Columns) -> _Builder:
        builder = cls()
        table, codes = cols.table, cols.codes
        priorities, priority_codes = cols.priorities, cols.priority_codes
        stamps, numbers, created = cols.column("stamps"), cols.column("numbers"), cols.column(
            "created"
        )
        starts, lengths = cols.starts, cols.lengths
        builder.entries = {
            rid: [stamps[i], numbers[i], starts[i], lengths[i], table[codes[i]],
                  priorities[priority_codes[i]], created[i]]
            for i, rid in enumerate(cols.ids())
        }
        builder.typed = dict(cols.typed)
        builder.typed_keys = dict(cols.typed_keys)
        builder.lines = cols.lines
        builder.damaged = cols.damaged
        return builder

    def feed_file(self, fd: int, start: int, end: int, crc: int) -> int:
        """Fold the lines of the file between `start` and `end` (just after a newline),
        read in chunks so memory stays flat; returns `crc` extended over those bytes."""
        carry = b""
        at = start
        while at < end:
            block = os.pread(fd, min(_CHUNK, end - at), at)
            if not block:
                raise OSError("the tasklist shrank while it was read")
            crc = zlib.crc32(block, crc)
            data = carry + block
            cut = data.rfind(b"\n") + 1
            self.feed(data, 0, cut, base=at - len(carry))
            carry = data[cut:]
            at += len(block)
        if carry:
            raise OSError("the tasklist changed while it was read")
        return crc

    def feed(self, data: Any, start: int, end: int, base: int = 0) -> None:
        """Fold the lines of data[start:end], which ends with a newline; a line at
        offset n of `data` is at `base + n` in the log."""
        entries, typed, typed_keys = self.entries, self.typed, self.typed_keys
        find = data.find
        while start < end:
            stop = find(b"\n", start, end)
            raw = data[start:stop]
            self.lines += 1
            record = parse_line(raw)
            if record is None:
                if raw.strip():
                    self.damaged += 1
            else:
                rid = record.get("id")
                if "type" in record:
                    if isinstance(rid, str):
                        key = (ts_of(record), self.lines)
                        previous = typed_keys.get(rid)
                        if previous is None or key > previous:
                            typed_keys[rid] = key
                            typed[rid] = record
                elif not isinstance(rid, str) or not rid:
                    self.damaged += 1
                else:
                    stamp = ts_of(record)
                    entry = entries.get(rid)
                    if entry is None or (stamp, self.lines) > (entry[0], entry[1]):
                        entries[rid] = [
                            stamp, self.lines, base + start, stop - start,
                            _key(record.get("status")), _key(record.get("priority")),
                            ts_of(record, "created_at"),
                        ]
            start = stop + 1

    def columns(self) -> _Columns | None:
        """The columns, or None when the state cannot be put in columns (an id with a
        newline, hundreds of distinct statuses): then the caller folds in full."""
        ids = list(self.entries)
        if any("\n" in rid for rid in ids):
            return None
        tables: tuple[list[str | None], list[str | None]] = ([], [])
        code_of: tuple[dict[str | None, int], dict[str | None, int]] = ({}, {})
        codes = (bytearray(), bytearray())
        starts, lengths, stamps, numbers, created = (array("q") for _ in range(5))
        for stamp, number, start, length, status, priority, made in self.entries.values():
            for n, value in enumerate((status, priority)):
                code = code_of[n].get(value)
                if code is None:
                    if len(tables[n]) == 255:
                        return None
                    code = code_of[n][value] = len(tables[n])
                    tables[n].append(value)
                codes[n].append(code)
            stamps.append(stamp)
            numbers.append(number)
            starts.append(start)
            lengths.append(length)
            created.append(made)
        joined = "".join(rid + "\n" for rid in ids)
        id_starts = array("q", [0])
        for rid in ids:
            id_starts.append(id_starts[-1] + len(rid) + 1)
        size = 8
        while size < 2 * len(ids):
            size *= 2
        slots = array("i", bytes(4 * size))
        mask = size - 1
        for i, rid in enumerate(ids):
            slot = _hash(rid) & mask
            while slots[slot]:
                slot = (slot + 1) & mask
            slots[slot] = i + 1
        return _Columns(
            (
                self.lines, self.damaged, joined, id_starts.tobytes(), slots.tobytes(),
                tables[0], bytes(codes[0]), tables[1], bytes(codes[1]),
                starts.tobytes(), lengths.tobytes(), stamps.tobytes(), numbers.tobytes(),
                created.tobytes(), self.typed, self.typed_keys,
            )
        )


# --- the lazy mappings a Fold gets ---------------------------------------------------


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

    def __init__(self, cols: _Columns, data: Any) -> None:
        super().__init__(cols)
        self._data = data  # the log, mapped
        self._decoded: dict[int, Record] = {}

    def _base(self, i: int) -> Record:
        record = self._decoded.get(i)
        if record is None:
            record = self._decoded[i] = self._decode(i)
        return record

    def _decode(self, i: int) -> Record:
        start = self._cols.starts[i]
        record = parse_line(self._data[start : start + self._cols.lengths[i]])
        if record is None:  # only if the file was rewritten in place under us
            from aidp.errors import StorageError

            raise StorageError("The tasklist changed while it was read; run the command again")
        return record

    def _decode_many(self, positions: list[int]) -> None:
        """Decode these tasks with one orjson call over an array of their lines (the
        per-call overhead is most of the cost of a small record)."""
        todo = [i for i in positions if i not in self._decoded]
        if not todo:
            return
        data, starts, lengths = self._data, self._cols.starts, self._cols.lengths
        blob = b"[" + b",".join([data[starts[i] : starts[i] + lengths[i]] for i in todo]) + b"]"
        try:
            records = orjson.loads(blob)
        except orjson.JSONDecodeError:  # a byte order mark, say: one line at a time
            records = [self._decode(i) for i in todo]
        if len(records) != len(todo) or not all(type(r) is dict for r in records):
            records = [self._decode(i) for i in todo]
        self._decoded.update(zip(todo, records, strict=True))

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
        return self._with_overlay(found, wanted, _summary)

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
            if type(stamp) is str and created[i] != _UNREADABLE:
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
                if _status_key(record) in wanted:
                    i = index(rid)
                    if i is None:
                        i, extra = extra, extra + 1
                    found.append((i, convert(record)))
            found.sort(key=lambda pair: pair[0])
        return [value for _i, value in found]

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
            key = _status_key(record)
            counts[key] = counts.get(key, 0) + 1
        return {status: n for status, n in counts.items() if n}


class LazyKeys(_Lazy):
    """`Fold.task_keys`, from the columns."""

    def _base(self, i: int) -> FoldKey:
        return self._cols.key(i)


# --- the snapshot file -----------------------------------------------------------------


def _rebuild_tail(covered: int) -> int:
    """How much may be appended before the snapshot is rewritten. Reads pay for the
    tail line by line and a rewrite costs about the whole snapshot, so the amortised
    cost is lowest with a tail growing like the square root of the log: 64 KB at
    100k events (30 MB), ~200 KB at 1M."""
    import math

    return max(REBUILD_TAIL, math.isqrt(covered) * 12)


def _crc_of(fd: int, end: int) -> int:
    """crc32 of the file's first `end` bytes, read in chunks (a mapping of the whole
    file would count every page in the process's peak memory)."""
    crc = 0
    at = 0
    while at < end:
        block = os.pread(fd, min(_CHUNK, end - at), at)
        if not block:
            return -1
        crc = zlib.crc32(block, crc)
        at += len(block)
    return crc


def _pyversion() -> int:
    return sys.version_info[0] * 100 + sys.version_info[1]  # marshal's format follows it


# The head: what the snapshot was checked against, in a fixed layout (no unmarshalling
# of anything before the file is known to be this machine's own): the log's device,
# inode, size, mtime, ctime, whether that was racy, the prefix covered and its crc32;
# the snapshot file's own device and inode; then the sampled regions.
_HEAD = struct.Struct("<QQqqqBqIQQI")
_SAMPLE = struct.Struct("<qqI")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class _Snapshot:
    def __init__(self, head: tuple[Any, ...], samples: list[tuple[int, int, int]],
                 body: memoryview) -> None:
        (
            self.dev, self.ino, self.size, self.mtime_ns, self.ctime_ns, self.racy,
            self.offset, self.crc, self.own_dev, self.own_ino, _count,
        ) = head
        self.samples = samples
        self.body = body


def _read_snapshot(path: str) -> _Snapshot | None:
    """The snapshot, if it is whole and was written here. Its recorded inode must be the
    file's own: a cache/ committed to a repository (it is git-ignored, but anyone can
    force-add it) is rebuilt, never unmarshalled."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) < _HEADER.size + _HEAD.size:
        return None
    magic, version, python, head_len, head_crc, body_len, body_crc = _HEADER.unpack_from(data)
    if (magic, version, python) != (MAGIC, VERSION, _pyversion()):
        return None
    head_end = _HEADER.size + head_len
    if len(data) != head_end + body_len:
        return None
    view = memoryview(data)  # slices of a view copy nothing
    head = view[_HEADER.size : head_end]
    if zlib.crc32(head) != head_crc:
        return None
    values = _HEAD.unpack_from(head)
    count = values[-1]
    if len(head) != _HEAD.size + count * _SAMPLE.size:
        return None
    if (values[8], values[9]) != (st.st_dev, st.st_ino):
        return None
    samples = [_SAMPLE.unpack_from(head, _HEAD.size + i * _SAMPLE.size) for i in range(count)]
    body = view[head_end:]
    if zlib.crc32(body) != body_crc:
        return None
    return _Snapshot(values, samples, body)


def _write_snapshot(log: TaskLog, head: tuple[Any, ...], body: bytes | memoryview) -> None:
    """Temp file + rename: a reader sees the old snapshot or the new one, whole. Never
    through a symbolic link: a cloned repository decides what .aidp/ entries are."""
    folder = log.dir / CACHE_DIR
    temp = folder / f"{SNAPSHOT_NAME}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        if folder.is_symlink():
            return
        if not folder.is_dir():
            folder.mkdir()
            # Ignored even where .aidp/.gitignore is missing (a folder made by hand).
            (folder / ".gitignore").write_bytes(b"# Derived by aidp; safe to delete.\n*\n")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
        try:
            own = os.fstat(fd)  # the inode the rename keeps: readers check it
            *stat, racy, offset, crc, samples = head
            head_bytes = _HEAD.pack(*stat, racy, offset, crc, own.st_dev, own.st_ino,
                                    len(samples))
            head_bytes += b"".join(_SAMPLE.pack(*sample) for sample in samples)
            header = _HEADER.pack(
                MAGIC, VERSION, _pyversion(), len(head_bytes), zlib.crc32(head_bytes),
                len(body), zlib.crc32(body),
            )
            for part in (header, head_bytes, body):
                view = memoryview(part)
                while view:
                    view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temp, folder / SNAPSHOT_NAME)
        _sweep(folder)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass


def _sweep(folder: Path) -> None:
    """Remove temp files that a writer killed before its rename left behind."""
    cutoff = time.time() - 3600
    for entry in os.scandir(folder):
        if entry.name.endswith(".tmp"):
            try:
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                pass


# --- loading ---------------------------------------------------------------------------


class _Loader:
    def __init__(self, log: TaskLog, fd: int, st: os.stat_result) -> None:
        import mmap

        self.log, self.fd, self.st = log, fd, st
        self.data = mmap.mmap(fd, st.st_size, prot=mmap.PROT_READ)
        self.size = st.st_size

    def load(self) -> Fold:
        snap = _read_snapshot(str(self.log.dir / CACHE_DIR / SNAPSHOT_NAME))
        cols: _Columns | None = None
        if snap is not None:
            checked = self._check(snap)
            if checked is not None:
                cols = _Columns(marshal.loads(snap.body))
                offset, crc, samples = snap.offset, snap.crc, snap.samples
                if checked:  # valid, but the stat data it records should be refreshed
                    self._save(snap.body, offset, crc, samples)
        if cols is None:
            return self._rebuild()
        end = self._last_newline_end()
        if end - offset >= _rebuild_tail(offset):
            with _no_gc():
                builder = _Builder.from_columns(cols)
                crc = builder.feed_file(self.fd, offset, end, crc)
            fresh = builder.columns()
            if fresh is None:
                return fold_bytes(self.data[: self.size])
            self._save(marshal.dumps(fresh.body()), end, crc, self._samples(end))
            cols, offset = fresh, end
        return self._fold(cols, offset)

    def _rebuild(self) -> Fold:
        end = self._last_newline_end()
        if end == 0:
            return fold_bytes(self.data[: self.size])
        builder = _Builder()
        with _no_gc():
            crc = builder.feed_file(self.fd, 0, end, 0)
        cols = builder.columns()
        if cols is None:
            return fold_bytes(self.data[: self.size])
        self._save(marshal.dumps(cols.body()), end, crc, self._samples(end))
        return self._fold(cols, end)

    def _fold(self, cols: _Columns, offset: int) -> Fold:
        fold = Fold(
            tasks=LazyTasks(cols, self.data),  # type: ignore[arg-type]
            typed=cols.typed,
            task_keys=LazyKeys(cols),  # type: ignore[arg-type]
            typed_keys=cols.typed_keys,
            damaged=cols.damaged,
            lines=cols.lines,
            ends_with_newline=True,
        )
        fold.feed(self.data[offset : self.size])  # the lines after the snapshot, torn one too
        return fold

    def _last_newline_end(self) -> int:
        return self.data.rfind(b"\n", 0, self.size) + 1

    def _samples(self, offset: int) -> list[tuple[int, int, int]]:
        """crc32 of a few regions of the prefix, always including its last bytes."""
        if offset <= 0:
            return []
        starts = {0, max(0, offset - SAMPLE_BYTES)}
        starts.update(offset * k // SAMPLE_COUNT for k in range(1, SAMPLE_COUNT))
        out = []
        for start in sorted(starts):
            length = min(SAMPLE_BYTES, offset - start)
            out.append((start, length, zlib.crc32(self.data[start : start + length])))
        return out

    def _check(self, snap: _Snapshot) -> bool | None:
        """None: the snapshot does not describe this file's prefix. False: it does.
        True: it does, and its recorded stat data should be refreshed."""
        st = self.st
        if snap.offset > self.size or snap.offset <= 0:
            return None
        if self.data[snap.offset - 1 : snap.offset] != b"\n":
            return None
        for start, length, crc in snap.samples:
            if zlib.crc32(self.data[start : start + length]) != crc:
                return None
        same_file = (st.st_dev, st.st_ino) == (snap.dev, snap.ino)
        unchanged = same_file and (st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (
            snap.size,
            snap.mtime_ns,
            snap.ctime_ns,
        )
        if unchanged and not snap.racy:
            return False
        if same_file and st.st_size > snap.size:
            return False  # appended to: the prefix was sampled above
        if _crc_of(self.fd, snap.offset) != snap.crc:
            return None
        # Verified in full: record this file's stat data, unless it is still racy.
        return not unchanged or not self._racy()

    def _racy(self) -> bool:
        return time.time_ns() - max(self.st.st_mtime_ns, self.st.st_ctime_ns) < RACY_NS

    def _save(self, body: bytes | memoryview, offset: int, crc: int, samples: list[Any]) -> None:
        st = self.st
        head = (
            st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
            self._racy(), offset, crc, samples,
        )
        _write_snapshot(self.log, head, body)
