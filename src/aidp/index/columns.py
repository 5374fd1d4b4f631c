"""The snapshot's columns: the winning task per id, kept without task dicts.

`_Builder` folds lines into them with the rule of `aidp.fold` (the same decisions as
`Fold.add_line`), `_Columns` answers lookups, counts and summaries from them.
"""

from __future__ import annotations

import os
import zlib
from array import array
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from aidp.fold import DAMAGED, TASK, TYPED, beats, key_of, place
from aidp.log import parse_line
from aidp.model import ts_of

if TYPE_CHECKING:
    from aidp.fold import FoldKey
    from aidp.model import Record

CHUNK = 4 << 20  # rebuilds read this much of the log at a time
_OTHER = None  # the status key of a task whose status is missing or not a string


class Changed(OSError):
    """The log changed while it was read: the caller folds it again from scratch."""


def status_key(record: Record) -> str | None:
    status = record.get("status")
    return status if isinstance(status, str) else _OTHER


def summary(record: Record) -> tuple[str, str | None, int]:
    return (record["id"], _key(record.get("priority")), ts_of(record, "created_at"))



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
            block = os.pread(fd, min(CHUNK, end - at), at)
            if not block:
                raise Changed("the tasklist shrank while it was read")
            crc = zlib.crc32(block, crc)
            data = carry + block
            cut = data.rfind(b"\n") + 1
            self.feed(data, 0, cut, base=at - len(carry))
            carry = data[cut:]
            at += len(block)
        if carry:
            raise Changed("the tasklist changed while it was read")
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
                start = stop + 1
                continue
            kind, rid = place(record)
            if kind == TASK:
                key = key_of(record, self.lines)
                entry = entries.get(rid)
                if beats(key, None if entry is None else (entry[0], entry[1])):
                    entries[rid] = [
                        key[0], key[1], base + start, stop - start,
                        _key(record.get("status")), _key(record.get("priority")),
                        ts_of(record, "created_at"),
                    ]
            elif kind == TYPED:
                key = key_of(record, self.lines)
                if beats(key, typed_keys.get(rid)):
                    typed_keys[rid] = key
                    typed[rid] = record
            elif kind == DAMAGED:
                self.damaged += 1
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


