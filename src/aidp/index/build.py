"""Building the snapshot's sections: `_Builder` folds lines into per-task arrays with
the rule of `aidp.fold` (the same decisions as `Fold.add_line`) and cuts them into the
sections `aidp.index.columns` describes and reads. The tunables stay in `columns`
(`CHUNK`, `BUCKET_ROWS`), where tests set them.
"""

from __future__ import annotations

import os
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from aidp.fold import TYPED, admit, beats, key_of, parse_line, place, task_tags
from aidp.index import columns, listing
from aidp.index.columns import (
    _Q_COLUMNS,
    Base,
    Changed,
    _joined,
    _pick,
    _take,
    bucket_of,
    finished_stamp,
)
from aidp.insights import week_start
from aidp.model import UNKNOWN_TS, parse_ts_once, ts_of

if TYPE_CHECKING:
    from aidp.fold import FoldKey
    from aidp.model import Record


class _Builder:
    """Folds lines into arrays without keeping task dicts: the same decisions as
    `Fold.add_line`/`add_record` (tests hold them equal), with far less memory — one
    dict of id → row and a few arrays — and as little Python work per line as the
    rule allows, since a rebuild parses every line of the log."""

    def __init__(self) -> None:
        self.rows: dict[str, int] = {}  # id -> row of the arrays, in first-seen order
        self.stamps, self.numbers, self.starts, self.lengths, self.created, self.finished = (
            array("q") for _ in range(6))
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
        self.fd: int | None = None  # the log the lines came from (for the listing)

    @classmethod
    def from_base(cls, base: Base) -> _Builder:
        """A builder holding the state of `base` (every section read)."""
        builder = cls()
        groups = [base.status_group(code) for code in range(len(base.table))]
        order: list[int] = []
        for group in groups:
            order.extend(group.rows)
        where = [0] * base.count  # row -> its place in the groups put end to end
        for at, row in enumerate(order):
            where[row] = at
        ids: list[str] = []
        for group in groups:
            ids.extend(group.ids)
        builder.rows = dict(zip(_pick(ids, where), range(base.count), strict=True))
        for name in ("starts", "lengths", "stamps", "numbers", "created", "finished"):
            joined = array("q")
            for group in groups:
                joined.frombytes(getattr(group, name).tobytes())
            setattr(builder, name, array("q", _take(joined, where, "q")))
        tags = array("i")
        statuses, priorities = bytearray(), bytearray()
        for group in groups:
            tags.frombytes(group.tags.tobytes())
            statuses += group.statuses
            priorities += group.priorities
        builder.tag_codes = array("i", _take(tags, where, "i"))
        builder.status_codes = bytearray(_take(statuses, where, "B"))
        builder.priority_codes = bytearray(_take(priorities, where, "B"))
        builder.take_tables(base)
        return builder

    def take_tables(self, base: Base) -> None:
        """Start from `base`'s code tables, tag sets, typed records and line counts."""
        self.tables = (list(base.table), list(base.priorities))
        self.code_of = tuple(  # type: ignore[assignment]
            {value: code for code, value in enumerate(table)} for table in self.tables)
        self.tagsets = list(base.tagsets)
        self.tagset_of = {tags: code for code, tags in enumerate(self.tagsets)}
        self.typed = dict(base.typed)
        self.typed_keys = dict(base.typed_keys)
        self.lines, self.damaged = base.lines, base.damaged

    def feed_file(self, fd: int, start: int, end: int, crc: int) -> int:
        """Fold the lines of the file between `start` and `end` (just after a newline),
        read in chunks so memory stays flat; returns `crc` extended over those bytes."""
        self.fd = fd
        carry = b""
        at = start
        while at < end:
            block = os.pread(fd, min(columns.CHUNK, end - at), at)
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

    def _adopter(self) -> Callable[[str], int | None] | None:
        """_Delta: what brings a task of the base in when the log first names it. (A
        method, not an attribute holding a bound method: that would be a reference
        cycle, keeping the base and its open snapshot until a garbage collection.)"""
        return None

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
        loads_json, decode_error = orjson.loads, orjson.JSONDecodeError
        rows, stamps, numbers = self.rows, self.stamps, self.numbers
        starts, lengths, created, finished = self.starts, self.lengths, self.created, self.finished
        tag_codes, tags_code = self.tag_codes, self.tags_code
        status_codes, priority_codes = self.status_codes, self.priority_codes
        status_of, priority_of = self.code_of
        adopt = self._adopter()
        number, damaged, offset = self.lines, self.damaged, base
        parts = data.split(b"\n")
        parts.pop()  # after the last newline: nothing
        for raw in parts:
            number += 1
            start, offset = offset, offset + len(raw) + 1
            try:
                record = admit(loads_json(raw), raw)  # the fold's rule of what a line is
            except decode_error:
                record = parse_line(raw)  # a byte order mark, or a blank line
                if record is None and not raw.strip():
                    continue
            if record is None:
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
            stamp = parse_ts_once(record.get("updated_at"))
            rid = record["id"]
            row = rows.get(rid)
            if row is None and adopt is not None:
                row = adopt(rid)
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
            done = finished_stamp(record) if status in ("done", "abandoned") else UNKNOWN_TS
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
                finished.append(done)
                status_codes.append(status_code)
                priority_codes.append(priority_code)
                tag_codes.append(tag_code)
            else:
                stamps[row], numbers[row] = stamp, number
                starts[row], lengths[row], created[row] = start, len(raw), made
                finished[row] = done
                status_codes[row], priority_codes[row] = status_code, priority_code
                tag_codes[row] = tag_code
        self.lines, self.damaged = number, damaged

    def sections(self, buckets: int | None = None) -> list[tuple[str, Any]] | None:
        """The snapshot's sections, or None when the state cannot be put in columns
        (hundreds of distinct statuses or priorities): then the caller folds in full.
        `buckets`: how many id buckets (default: from the number of tasks). Uses the
        builder up."""
        import marshal

        if self.overflow:
            return None
        ids = list(self.rows)
        self.rows = {}
        count = len(ids)
        if any("\n" in rid for rid in ids):
            return None  # never a task (well_typed_task): kept out of the joined ids
        if buckets is None:
            buckets = 1
            while buckets * columns.BUCKET_ROWS < count and buckets < 1 << 16:
                buckets *= 2
        statuses = self.status_codes
        # Arrays, not lists: a list holds an int object per task (~30 MB at 1M events).
        by_status = [array("q") for _ in self.tables[0]]
        for row, code in enumerate(statuses):
            by_status[code].append(row)
        by_bucket = [array("q") for _ in range(buckets)]
        for row, rid in enumerate(ids):
            by_bucket[bucket_of(rid, buckets)].append(row)

        def parts(rows: array[int]) -> Iterator[bytes]:
            # One part at a time (columns.parts_section): the finished tasks' group is
            # tens of MB at 1M events.
            yield _joined(_pick(ids, rows)).encode()
            yield array("q", rows).tobytes()
            for name in _Q_COLUMNS[1:]:
                yield _take(getattr(self, name), rows, "q")
            yield _take(self.tag_codes, rows, "i")
            yield _take(statuses, rows, "B")
            yield _take(self.priority_codes, rows, "B")

        def group(rows: array[int]) -> Iterator[bytes | memoryview]:
            return columns.parts_section(parts(rows))

        weeks: dict[str, dict[tuple[int, int], int]] = {}
        for kind, column in (("created", self.created), ("finished", self.finished)):
            weeks[kind] = dict(Counter(
                (code, week_start(stamp)) for code, stamp in zip(statuses, column, strict=True)
                if stamp != UNKNOWN_TS))
        meta = {
            "lines": self.lines, "damaged": self.damaged, "count": count,
            "statuses": self.tables[0], "priorities": self.tables[1],
            "tagsets": self.tagsets, "buckets": buckets,
            "by_status": {code: len(rows) for code, rows in enumerate(by_status)},
            "tag_sets": dict(Counter(zip(statuses, self.tag_codes, strict=True))),
            "prio_sets": dict(Counter(zip(statuses, self.priority_codes, strict=True))),
            "weeks": weeks,
        }
        out: list[tuple[str, Any]] = [
            ("meta", marshal.dumps(meta)), ("typed", marshal.dumps((self.typed, self.typed_keys))),
            ("queue", partial(queue_section, self.typed, self.typed_keys)),
            ("queue_keys", partial(queue_section, self.typed, self.typed_keys, keys=True))]
        # Each group is made when it is written (see write_snapshot): one at a time.
        out += [(f"s{code}", partial(group, rows)) for code, rows in enumerate(by_status)]
        for code, rows in enumerate(by_status):
            if self.tables[0][code] in listing.LISTED:
                pair = listing.build(self.fd, ids, rows, self.starts, self.lengths, self.created)
                out += [(f"j{code}", pair.elements), (f"h{code}", pair.head)]
        out += [(f"b{n}", partial(group, rows)) for n, rows in enumerate(by_bucket)]
        return out


def queue_section(typed: dict[str, Record], typed_keys: dict[str, FoldKey], *,
                  keys: bool = False) -> bytes:
    """The work queue's state folded from the typed records (queue.state), so that
    `show` and `ready` need not read and fold every queue record; with `keys`, the
    queue keys `tasks list --json` adds to tasks, encoded (queue.json_keys)."""
    import marshal

    from aidp.fold import Fold
    from aidp.queue.folded import json_keys, state

    qs = state(Fold(typed=typed, typed_keys=typed_keys))
    return marshal.dumps(json_keys(qs) if keys else qs.fields())


def materialize(sections: list[tuple[str, Any]]) -> Callable[[str], bytes]:
    """Read access to sections held in memory (where none could be written)."""
    made: dict[str, bytes] = {}
    for name, data in sections:
        found = data() if callable(data) else data
        made[name] = found if isinstance(found, bytes) else b"".join(found)
    return made.__getitem__
