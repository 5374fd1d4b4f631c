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

import orjson

from aidp.fold import TYPED, beats, key_of, parse_line, place, task_tags, well_typed_task
from aidp.model import parse_ts_once, ts_of

if TYPE_CHECKING:
    from aidp.fold import FoldKey
    from aidp.model import Record

CHUNK = 1 << 20  # rebuilds read this much of the log at a time
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
            self.tagsets,  # distinct tag tuples (task_tags); `tag_codes` index it, 0: none
            tag_codes,
        ) = body
        self.count = len(self.codes)
        self.id_starts = _array(id_starts)
        self.slots = _array(slots, "i")
        self.mask = len(self.slots) - 1
        self.starts = _array(starts)
        self.lengths = _array(lengths)
        self.tag_codes = _array(tag_codes, "i")
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
            self.typed, self.typed_keys, self.tagsets, self.tag_codes.tobytes(),
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
    `Fold.add_line`/`add_record` (tests hold them equal), with far less memory — one
    dict of id → row and a few arrays — and as little Python work per line as the
    rule allows, since a rebuild parses every line of the log."""

    def __init__(self) -> None:
        self.rows: dict[str, int] = {}  # id -> row of the arrays, in first-seen order
        self.stamps, self.numbers, self.starts, self.lengths, self.created = (
            array("q") for _ in range(5))
        self.status_codes, self.priority_codes = bytearray(), bytearray()
        self.tables: tuple[list[str | None], list[str | None]] = ([], [])
        self.code_of: tuple[dict[str | None, int], dict[str | None, int]] = ({}, {})
        self.overflow = False  # over 255 distinct statuses or priorities
        self.tag_codes = array("i")
        self.tagsets: list[tuple[str, ...]] = [()]
        self.tagset_of: dict[tuple[str, ...], int] = {(): 0}
        # A task's `tags` value as written (a tuple for a list) → its code: most lines
        # repeat a few tag lists, so task_tags runs once per distinct value.
        self.tags_code: dict[object, int] = {}
        self.typed: dict[str, Record] = {}
        self.typed_keys: dict[str, FoldKey] = {}
        self.lines = 0
        self.damaged = 0

    @classmethod
    def from_columns(cls, cols: _Columns) -> _Builder:
        builder = cls()
        builder.rows = {rid: i for i, rid in enumerate(cols.ids())}
        builder.stamps = array("q", cols.column("stamps"))
        builder.numbers = array("q", cols.column("numbers"))
        builder.starts = array("q", cols.starts)
        builder.lengths = array("q", cols.lengths)
        builder.created = array("q", cols.column("created"))
        builder.status_codes = bytearray(cols.codes)
        builder.priority_codes = bytearray(cols.priority_codes)
        builder.tables = (list(cols.table), list(cols.priorities))
        builder.code_of = tuple(  # type: ignore[assignment]
            {value: code for code, value in enumerate(table)} for table in builder.tables)
        builder.tag_codes = array("i", cols.tag_codes)
        builder.tagsets = list(cols.tagsets)
        builder.tagset_of = {tags: code for code, tags in enumerate(builder.tagsets)}
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
            self.feed(data[:cut], base=at - len(carry))
            carry = data[cut:]
            at += len(block)
        if carry:
            raise Changed("the tasklist changed while it was read")
        return crc

    def _code(self, n: int, value: object) -> int:
        key = value if type(value) is str else None
        code = self.code_of[n].get(key)
        if code is None:
            if len(self.tables[n]) == 255:
                self.overflow = True
                return 0
            code = self.code_of[n][key] = len(self.tables[n])
            self.tables[n].append(key)
        return code

    def _tags_code(self, record: Record) -> int:
        """The code of the task's tags (see task_tags), remembered per written value."""
        value = record.get("tags")
        tags = tuple(task_tags(record))
        code = self.tagset_of.get(tags)
        if code is None:
            code = self.tagset_of[tags] = len(self.tagsets)
            self.tagsets.append(tags)
        try:
            self.tags_code[tuple(value) if type(value) is list else value] = code
        except TypeError:
            pass  # unhashable: task_tags decides each time
        return code

    def feed(self, data: bytes, base: int = 0) -> None:
        """Fold the lines of `data`, which ends with a newline; `data` starts at offset
        `base` of the log."""
        loads, decode_error = orjson.loads, orjson.JSONDecodeError
        rows, stamps, numbers = self.rows, self.stamps, self.numbers
        starts, lengths, created = self.starts, self.lengths, self.created
        tag_codes, tags_code = self.tag_codes, self.tags_code
        status_codes, priority_codes = self.status_codes, self.priority_codes
        status_of, priority_of = self.code_of
        number, damaged, offset = self.lines, self.damaged, base
        parts = data.split(b"\n")
        parts.pop()  # after the last newline: nothing
        for raw in parts:
            number += 1
            start, offset = offset, offset + len(raw) + 1
            try:
                record = loads(raw)
            except decode_error:
                record = parse_line(raw)  # a byte order mark, or a blank line
                if record is None:
                    if raw.strip():
                        damaged += 1
                    continue
            if type(record) is not dict:
                damaged += 1
                continue
            if "type" in record:
                kind, rid = place(record)
                if kind == TYPED:
                    key = key_of(record, number)
                    if beats(key, self.typed_keys.get(rid)):
                        self.typed_keys[rid] = key
                        self.typed[rid] = record
                continue  # IGNORED: a kind this version cannot fold
            if not well_typed_task(record):
                damaged += 1
                continue
            stamp = parse_ts_once(record.get("updated_at"))
            rid = record["id"]
            row = rows.get(rid)
            if row is not None and not beats((stamp, number), (stamps[row], numbers[row])):
                continue  # an older state: the current winner stays
            status, priority = record.get("status"), record.get("priority")
            status_code = status_of.get(status) if type(status) is str else None
            if status_code is None:
                status_code = self._code(0, status)
            priority_code = priority_of.get(priority) if type(priority) is str else None
            if priority_code is None:
                priority_code = self._code(1, priority)
            made = ts_of(record, "created_at")
            tags = record.get("tags")
            try:
                tag_code = tags_code[tuple(tags) if type(tags) is list else tags]
            except (KeyError, TypeError):  # a value not seen yet (or unhashable)
                tag_code = self._tags_code(record)
            if row is None:
                rows[rid] = len(stamps)
                stamps.append(stamp)
                numbers.append(number)
                starts.append(start)
                lengths.append(len(raw))
                created.append(made)
                status_codes.append(status_code)
                priority_codes.append(priority_code)
                tag_codes.append(tag_code)
            else:
                stamps[row], numbers[row] = stamp, number
                starts[row], lengths[row], created[row] = start, len(raw), made
                status_codes[row], priority_codes[row] = status_code, priority_code
                tag_codes[row] = tag_code
        self.lines, self.damaged = number, damaged

    def columns(self) -> _Columns | None:
        """The columns, or None when the state cannot be put in columns (an id with a
        newline, hundreds of distinct statuses): then the caller folds in full."""
        ids = list(self.rows)
        if self.overflow or any("\n" in rid for rid in ids):
            return None
        self.rows = {}  # the builder is used up: its biggest part goes before more is built
        joined = "".join(rid + "\n" for rid in ids)
        id_starts = array("q", [0])
        at = 0
        for rid in ids:
            at += len(rid) + 1
            id_starts.append(at)
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
        del ids
        arrays = []
        for name in ("starts", "lengths", "stamps", "numbers", "created"):
            arrays.append(getattr(self, name).tobytes())
            setattr(self, name, array("q"))
        starts, lengths, stamps, numbers, created = arrays
        del arrays
        return _Columns(
            (
                self.lines, self.damaged, joined, id_starts.tobytes(), slots.tobytes(),
                self.tables[0], bytes(self.status_codes), self.tables[1],
                bytes(self.priority_codes), starts, lengths, stamps, numbers, created,
                self.typed, self.typed_keys, self.tagsets, self.tag_codes.tobytes(),
            )
        )
