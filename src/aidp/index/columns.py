"""What the snapshot holds, and reading it: the winning task per id, without task dicts.

`aidp.index.build._Builder` folds lines into per-task arrays with the rule of
`aidp.fold` (the same decisions as `Fold.add_line`) and cuts them into the snapshot's
sections; `aidp.index.delta._Delta` writes the next snapshot after appends:

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

import struct
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Literal

from aidp.errors import StorageError
from aidp.index.snapshot import Corrupt, loads
from aidp.insights import finished_at, week_start
from aidp.model import UNKNOWN_TS, ts_of

if TYPE_CHECKING:
    from aidp.fold import FoldKey
    from aidp.model import Record

CHUNK = 1 << 20  # rebuilds read this much of the log at a time
_OTHER = None  # the status key of a task whose status is missing or not a string
BUCKET_ROWS = 1024  # about this many tasks per id bucket
_Q_COLUMNS = ("rows", "starts", "lengths", "stamps", "numbers", "created", "finished")
_GROUP_PARTS = 11  # the joined ids, the 7 columns above, tags, statuses, priorities
_COUNT = struct.Struct("<I")


def parts_section(parts: Iterable[bytes | memoryview]) -> Iterator[bytes | memoryview]:
    """A section of parts written one after another as they are made, then their
    lengths and count: a group's columns are never all held at once while written
    (the finished tasks' group is ~25 MB at 1M events), and read without a copy."""
    lengths = array("q")
    for part in parts:
        lengths.append(len(part))
        yield part
    yield lengths.tobytes()
    yield _COUNT.pack(len(lengths))


def read_parts(data: bytes) -> list[memoryview]:
    """The parts of a section written by parts_section, as views of `data`."""
    view = memoryview(data)
    end = len(view) - _COUNT.size
    count = _COUNT.unpack_from(view, end)[0]
    sizes = view[end - 8 * count:end].cast("q")
    out, at = [], 0
    for size in sizes:
        out.append(view[at:at + size])
        at += size
    if at != end - 8 * count:
        raise Corrupt("section parts do not add up")
    return out


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

    __slots__ = ("_ids", "_joined", "_lookups", "_utf8", "_where", "created", "finished",
                 "lengths", "numbers", "priorities", "rows", "stamps", "starts", "statuses",
                 "tags")

    def __init__(self, data: bytes) -> None:
        parts = read_parts(data)
        if len(parts) != _GROUP_PARTS:
            raise Corrupt("not a group")
        (joined, rows, starts, lengths, stamps, numbers, created, finished, tags,
         statuses, priorities) = parts
        self._utf8 = joined  # decoded when first wanted: counts and ages need no id
        self._joined: str | None = None
        self.statuses, self.priorities = bytes(statuses), bytes(priorities)
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
    def joined(self) -> str:
        """The ids, each followed by a newline."""
        if self._joined is None:
            self._joined = str(self._utf8, "utf-8")
        return self._joined

    @property
    def ids(self) -> list[str]:
        if self._ids is None:
            # From the bytes (no copy of the joined text kept: 10 MB for the finished
            # tasks at 1M events, which list --all splits).
            text = self._joined if self._joined is not None else str(self._utf8, "utf-8")
            self._ids = text.split("\n")
            self._ids.pop()  # after the last newline: nothing
        return self._ids

    def id_at(self, j: int) -> str:
        """The id at position j, without splitting them all when they are not split
        yet (the oldest open task is near the front: the fold's order is mostly the
        order tasks were filed in)."""
        if self._ids is not None:
            return self._ids[j]
        return self.joined.split("\n", j + 1)[j]

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


def _view(data: bytes | memoryview, kind: Literal["q", "i"] = "q") -> memoryview[int]:
    return memoryview(data).cast(kind)


def _pick(items: Any, rows: Sequence[int]) -> list[Any]:
    """items[r] for each of `rows`, as a list."""
    if not rows:
        return []
    picked = itemgetter(*rows)(items)
    return [picked] if len(rows) == 1 else list(picked)


def _take(column: Any, rows: Sequence[int], kind: str) -> bytes:
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
        self.prio_sets: dict[tuple[int, int], int] = meta["prio_sets"]
        self.weeks: dict[str, dict[tuple[int, int], int]] = meta["weeks"]
        self._typed: tuple[dict[str, Record], dict[str, FoldKey]] | None = None
        self._groups: dict[str, Group] = {}
        self._located: dict[str, Loc | None] = {}
        self._ids: list[str] | None = None

    def typed_pair(self) -> tuple[dict[str, Record], dict[str, FoldKey]]:
        """The typed records and their fold keys: a section read when first wanted
        (`stats` and `list` need none, and at 1M events with a busy work queue it is
        megabytes)."""
        if self._typed is None:
            self._typed = self._load("typed")  # type: ignore[assignment]
            assert self._typed is not None
        return self._typed

    def queue_fields(self) -> tuple[Any, ...]:
        """The work queue's state of the typed records (build.queue_section), fresh."""
        return self._load("queue")  # type: ignore[return-value]

    def queue_keys(self) -> tuple[dict[str, bytes], dict[str, bytes]]:
        """The queue keys list --json adds, encoded (build.queue_section)."""
        return self._load("queue_keys")  # type: ignore[return-value]

    @property
    def typed(self) -> dict[str, Record]:
        return self.typed_pair()[0]

    @property
    def typed_keys(self) -> dict[str, FoldKey]:
        return self.typed_pair()[1]

    def _load(self, name: str) -> object:
        return loads(self.raw(name))

    def raw(self, name: str) -> bytes:
        """A section's checked bytes (rebuilt from the log if they fail the check)."""
        try:
            return self._read(name)
        except Corrupt:
            try:
                # The same layout: the sections read so far stay valid.
                self._read = self._recover(getattr(self, "buckets", None))
                return self._read(name)
            except (OSError, Corrupt):
                raise _changed() from None

    def group(self, name: str) -> Group:
        found = self._groups.get(name)
        if found is None:
            found = self._groups[name] = self.new_group(name)
        return found

    def new_group(self, name: str) -> Group:
        """The group section `name`, read now (not kept)."""
        try:
            return Group(self.raw(name))
        except Corrupt:  # cannot pass its crc32 unless written so: this version's, or not
            raise _changed() from None

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
