"""What the snapshot holds, and building it: the winning task per id, without task dicts.

`_Builder` folds lines into per-task arrays with the rule of `aidp.fold` (the same
decisions as `Fold.add_line`) and cuts them into the snapshot's sections:

- `meta`: counts a read answers without touching a task — per status, per
  (status, priority), per (status, tag list), and per (status, week) of created_at and
  of finishing (`insights.finished_at`) — plus the code tables;
- `typed`: the typed records, whole;
- `s<code>`: the tasks of one status, as a `Group` (columns, in the fold's order):
  `list --status pending` reads the pending ones and none of the finished history;
- `b<n>`: the tasks whose id falls in bucket n (a checksum of the first four
  characters of the id's last `_` part: a short-id prefix names its bucket), as a
  `Group`: `show`/`done` read one bucket to find a task.

Every task is in one status section and one bucket, with the same columns in both.
`Base` answers from the sections, loading each at most once, when first needed.
"""

from __future__ import annotations

import os
import zlib
from array import array
from collections import Counter
from collections.abc import Callable
from functools import partial
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Literal

import orjson

from aidp.errors import StorageError
from aidp.fold import TYPED, beats, key_of, parse_line, place, task_tags, well_typed_task
from aidp.index.snapshot import Corrupt, loads
from aidp.insights import finished_at, week_start
from aidp.model import UNKNOWN_TS, parse_ts_once, ts_of

if TYPE_CHECKING:
    from aidp.fold import FoldKey
    from aidp.model import Record

CHUNK = 1 << 20  # rebuilds read this much of the log at a time
_OTHER = None  # the status key of a task whose status is missing or not a string
BUCKET_ROWS = 1024  # about this many tasks per id bucket
_Q_COLUMNS = ("rows", "starts", "lengths", "stamps", "numbers", "created", "finished")


class Changed(OSError):
    """The log changed while it was read: the caller folds it again from scratch."""


def status_key(record: Record) -> str | None:
    status = record.get("status")
    return status if isinstance(status, str) else _OTHER


def summary(record: Record) -> tuple[str, str | None, int]:
    return (record["id"], _key(record.get("priority")), ts_of(record, "created_at"))


def week_of(stamp: int) -> int | None:
    """The week (its Monday, µs) a stamp falls in; None for an unreadable one."""
    return None if stamp == UNKNOWN_TS else week_start(stamp)


def finished_stamp(record: Record) -> int:
    found = finished_at(record)
    return UNKNOWN_TS if found is None else found


def bucket_of(rid: str, buckets: int) -> int:
    key = rid.rpartition("_")[2][:4]
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) & (buckets - 1)


def _key(value: object) -> str | None:
    """Status and priority as columns hold them: the string, or None for anything else."""
    return value if isinstance(value, str) else None


def _changed() -> StorageError:
    return StorageError(
        "The tasklist was rewritten by another program while it was read; run the "
        "command again"
    )


class Group:
    """Tasks (of one status, or of one id bucket), column by column, in the fold's order.
    The columns are views of the section's bytes and the ids one string: loading
    copies nothing per task (an id never holds a newline: such a line is damage)."""

    __slots__ = ("_ids", "_lookups", "_where", "created", "finished", "joined", "lengths",
                 "numbers", "priorities", "rows", "stamps", "starts", "statuses", "tags")

    def __init__(self, body: tuple[Any, ...]) -> None:
        (self.joined, rows, starts, lengths, stamps, numbers, created, finished, tags,
         self.statuses, self.priorities) = body
        self.rows, self.starts, self.lengths = _view(rows), _view(starts), _view(lengths)
        self.stamps, self.numbers = _view(stamps), _view(numbers)
        self.created, self.finished = _view(created), _view(finished)
        self.tags = _view(tags, "i")
        self._ids: list[str] | None = None
        self._where: dict[str, int] | None = None
        self._lookups = 0

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def ids(self) -> list[str]:
        if self._ids is None:
            self._ids = self.joined[:-1].split("\n") if self.joined else []
        return self._ids

    def where(self, rid: str) -> int | None:
        """The position of `rid` in this group, or None: a search of the joined ids for
        the first few look-ups, a dict after that."""
        if self._where is None:
            self._lookups += 1
            if self._lookups <= 16:
                joined, needle = self.joined, rid + "\n"
                at = joined.find(needle)
                while at > 0 and joined[at - 1] != "\n":
                    at = joined.find(needle, at + 1)
                return None if at < 0 else joined.count("\n", 0, at)
            self._where = {tid: j for j, tid in enumerate(self.ids)}
        return self._where.get(rid)


def _joined(ids: list[str]) -> str:
    return "\n".join(ids) + "\n" if ids else ""


def _view(data: bytes, kind: Literal["q", "i"] = "q") -> memoryview[int]:
    return memoryview(data).cast(kind)


def _pick(items: Any, rows: list[int]) -> list[Any]:
    """items[r] for each of `rows`, as a list."""
    if not rows:
        return []
    picked = itemgetter(*rows)(items)
    return [picked] if len(rows) == 1 else list(picked)


def _take(column: Any, rows: list[int], kind: str) -> bytes:
    """column[r] for each of `rows`, as the bytes of an array of `kind` (bytes for "B")."""
    if not rows:
        return b""
    picked = itemgetter(*rows)(column)
    values = (picked,) if len(rows) == 1 else picked
    return bytes(values) if kind == "B" else array(kind, values).tobytes()


Loc = tuple[Group, int]


class Base:
    """The fold of the snapshot's prefix, answered section by section.

    `read(name)` gives a section's checked bytes or raises Corrupt; then `recover()`
    rebuilds every section from the log's prefix (the same answers: the sections
    loaded before were checked) and reading goes on from those."""

    def __init__(self, read: Callable[[str], bytes],
                 recover: Callable[[int | None], Callable[[str], bytes]]) -> None:
        self._read = read
        self._recover = recover
        meta: dict[str, Any] = self._load("meta")  # type: ignore[assignment]
        self.lines: int = meta["lines"]
        self.damaged: int = meta["damaged"]
        self.count: int = meta["count"]
        self.table: list[str | None] = meta["statuses"]
        self.priorities: list[str | None] = meta["priorities"]
        self.tagsets: list[tuple[str, ...]] = meta["tagsets"]
        self.buckets: int = meta["buckets"]
        self.by_status: dict[int, int] = meta["by_status"]
        self.tag_sets: dict[tuple[int, int], int] = meta["tag_sets"]
        self.weeks: dict[str, dict[tuple[int, int], int]] = meta["weeks"]
        typed: tuple[dict[str, Record], dict[str, FoldKey]] = self._load("typed")  # type: ignore[assignment]
        self.typed, self.typed_keys = typed
        self._groups: dict[str, Group] = {}
        self._located: dict[str, Loc | None] = {}
        self._ids: list[str] | None = None

    def _load(self, name: str) -> object:
        try:
            data = self._read(name)
        except Corrupt:
            try:
                # The same layout: the sections read so far stay valid.
                self._read = self._recover(getattr(self, "buckets", None))
                data = self._read(name)
            except (OSError, Corrupt):
                raise _changed() from None
        return loads(data)

    def group(self, name: str) -> Group:
        found = self._groups.get(name)
        if found is None:
            found = self._groups[name] = Group(self._load(name))  # type: ignore[arg-type]
        return found

    def status_group(self, code: int) -> Group:
        return self.group(f"s{code}")

    def codes(self, statuses: Any) -> list[int]:
        """The status codes of `statuses` (None: every code)."""
        if statuses is None:
            return list(range(len(self.table)))
        wanted = set(statuses)
        return [c for c, s in enumerate(self.table) if s is not None and s in wanted]

    def locate(self, rid: str) -> Loc | None:
        """(bucket group, position) of the task `rid`, or None."""
        found = self._located.get(rid, False)
        if found is False:
            found = None
            if self.count:
                group = self.group(f"b{bucket_of(rid, self.buckets)}")
                j = group.where(rid)
                found = None if j is None else (group, j)
            self._located[rid] = found
        return found  # type: ignore[return-value]

    def ids(self) -> list[str]:
        """Every id, in the fold's order."""
        if self._ids is None:
            ids: list[Any] = [None] * self.count
            for code in range(len(self.table)):
                group = self.status_group(code)
                for row, rid in zip(group.rows, group.ids, strict=True):
                    ids[row] = rid
            self._ids = ids
        return self._ids

    def ids_with_prefix(self, prefix: str, *, last_part: bool) -> list[str]:
        """Ids that start with `prefix`, or (`last_part`) whose last `_` part does."""
        if last_part and len(prefix) >= 4 and "_" not in prefix and "\n" not in prefix:
            if not self.count:
                return []
            # One bucket, searched as one string: the lines holding "_" + prefix or
            # starting with it, then checked exactly.
            joined = "\n" + self.group(f"b{bucket_of(prefix, self.buckets)}").joined
            candidates: list[str] = []
            for needle in ("_" + prefix, "\n" + prefix):
                at = joined.find(needle)
                while at >= 0:
                    start = joined.rfind("\n", 0, at + 1) + 1
                    end = joined.find("\n", at + 1)
                    candidates.append(joined[start:end])
                    at = joined.find(needle, end)
            found = dict.fromkeys(r for r in candidates if r.rpartition("_")[2].startswith(prefix))
            return sorted(found)
        candidates = self.ids()
        if last_part:
            return [r for r in candidates if r.rpartition("_")[2].startswith(prefix)]
        return [r for r in candidates if r.startswith(prefix)]


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
        builder.tables = (list(base.table), list(base.priorities))
        builder.code_of = tuple(  # type: ignore[assignment]
            {value: code for code, value in enumerate(table)} for table in builder.tables)
        builder.tagsets = list(base.tagsets)
        builder.tagset_of = {tags: code for code, tags in enumerate(builder.tagsets)}
        builder.typed = dict(base.typed)
        builder.typed_keys = dict(base.typed_keys)
        builder.lines = base.lines
        builder.damaged = base.damaged
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
                record = loads_json(raw)
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
            while buckets * BUCKET_ROWS < count and buckets < 1 << 16:
                buckets *= 2
        statuses = self.status_codes
        by_status: list[list[int]] = [[] for _ in self.tables[0]]
        for row, code in enumerate(statuses):
            by_status[code].append(row)
        by_bucket: list[list[int]] = [[] for _ in range(buckets)]
        for row, rid in enumerate(ids):
            by_bucket[bucket_of(rid, buckets)].append(row)

        def group(rows: list[int]) -> bytes:
            return marshal.dumps((
                _joined(_pick(ids, rows)), array("q", rows).tobytes(),
                *(_take(getattr(self, name), rows, "q") for name in _Q_COLUMNS[1:]),
                _take(self.tag_codes, rows, "i"), _take(statuses, rows, "B"),
                _take(self.priority_codes, rows, "B")))

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
            "weeks": weeks,
        }
        out: list[tuple[str, Any]] = [
            ("meta", marshal.dumps(meta)), ("typed", marshal.dumps((self.typed, self.typed_keys)))]
        # Each group is made when it is written (see write_snapshot): one at a time.
        out += [(f"s{code}", partial(group, rows)) for code, rows in enumerate(by_status)]
        out += [(f"b{n}", partial(group, rows)) for n, rows in enumerate(by_bucket)]
        return out


def materialize(sections: list[tuple[str, Any]]) -> Callable[[str], bytes]:
    """Read access to sections held in memory (where none could be written)."""
    made = {name: data() if callable(data) else data for name, data in sections}
    return made.__getitem__


def _merge_group(old: Group | None, drop: list[int], add: list[tuple[Any, ...]]) -> bytes:
    """The section of `old` without the tasks at rows `drop`, with the entries `add`
    (row, id, then the columns in Group order), in row order: slices of the old columns
    copied whole, so the cost is the changes plus a copy, not a loop over every task."""
    import marshal
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
    return marshal.dumps((_joined(ids), *(bytes(c) if isinstance(c, bytearray) else c.tobytes()
                                 for c in columns)))


class _Delta(_Builder):
    """Folds the lines after a snapshot on top of it, keeping only the tasks those lines
    name (brought in from the base when first named), and writes the next snapshot by
    changing only the sections those tasks are in: the cost follows the lines added,
    not the size of the history."""

    def __init__(self, base: Base) -> None:
        super().__init__()
        self.base = base
        self.tables = (list(base.table), list(base.priorities))
        self.code_of = tuple(  # type: ignore[assignment]
            {value: code for code, value in enumerate(table)} for table in self.tables)
        self.tagsets = list(base.tagsets)
        self.tagset_of = {tags: code for code, tags in enumerate(self.tagsets)}
        self.typed = dict(base.typed)
        self.typed_keys = dict(base.typed_keys)
        self.lines, self.damaged = base.lines, base.damaged
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
        return found if found is not None else Group(self.base._load(name))  # type: ignore[arg-type]

    def _merge_released(self, name: str, drop: list[int], add: list[tuple[Any, ...]]) -> bytes:
        return _merge_group(self._release(name), drop, add)

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
                for kind, column in (("created", group.created), ("finished", group.finished)):
                    if column[j] != UNKNOWN_TS:
                        count(meta_weeks[kind], (code, week_start(column[j])), -1)
                drop_status.setdefault(code, []).append(row)
                drop_bucket.setdefault(bucket, []).append(row)
            code = self.status_codes[local]
            count(by_status, code, 1)
            count(tag_sets, (code, self.tag_codes[local]), 1)
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
            "weeks": {kind: {key: n for key, n in counts.items() if n}
                      for kind, counts in meta_weeks.items()},
        }
        out: list[tuple[str, Any]] = [("meta", marshal.dumps(meta)),
                                      ("typed", marshal.dumps((self.typed, self.typed_keys)))]
        for code in range(len(self.tables[0])):
            name = f"s{code}"
            if code in drop_status or code in add_status or code >= len(base.table):
                drop, add = drop_status.get(code, []), add_status.get(code, [])
                out.append((name, partial(self._merge_released, name, drop, add)
                            if code < len(base.table) else partial(_merge_group, None, drop, add)))
            else:
                out.append((name, snap.copy(name)))
        for bucket in range(base.buckets):
            name = f"b{bucket}"
            if bucket in add_bucket:
                out.append((name, partial(self._merge_released, name,
                                          drop_bucket.get(bucket, []), add_bucket[bucket])))
            else:
                out.append((name, snap.copy(name)))
        return out
