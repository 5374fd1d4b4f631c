"""The open tasks as `tasks list --json` prints them, kept in the snapshot.

Each open status (pending, in_progress) has a listing of two sections: `j<code>`, each
of its tasks as an element of list's indented JSON array — the bytes `orjson.dumps(
tasks, option=OPT_INDENT_2)` gives for it, each followed by `,\\n` — and `h<code>`, the
head: their ids, fold rows, created stamps and offsets, and the ids of tasks with a
work-queue key of their own. Both are in list's default order: newest created first,
and among equal stamps the task later in the fold first (the order `tasks.query`
gives: the fold's order reversed, then a stable sort). `tasks list --status pending
--json` then copies bytes instead of decoding, sorting and encoding every open task
(47k at 1M events): the few tasks the lines after the snapshot changed are put in
place, and the work queue's keys are written into the tasks that have them
(queue.listed_json). `stats` reads the heads alone (ages, the oldest open task).

A head is empty (NONE) when its elements could not be made (no log to read them
from); the reader then answers None and the command takes the general path.
"""

from __future__ import annotations

import marshal
import os
from array import array
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from functools import partial

import orjson

from aidp.fold import parse_line
from aidp.index.columns import Changed, _joined, _view
from aidp.model import OPEN_STATUSES, Record

LISTED = frozenset(OPEN_STATUSES)  # the statuses with a listing section
# The keys queue.extras adds to a task in JSON. A task with one of them of its own (a
# foreign file's) is decoded and encoded again when the queue adds keys to it.
QUEUE_KEYS = frozenset(("blocked_by", "parent", "assignee", "claimed_at", "notes"))
_INDENT = orjson.OPT_INDENT_2
_SEPARATOR = b",\n"


def element(record: Record) -> bytes:
    """`record` as an element of an indented JSON array, with its trailing `,\\n`."""
    return b"  " + orjson.dumps(record, option=_INDENT).replace(b"\n", b"\n  ") + _SEPARATOR


def order_key(created: int, row: int) -> tuple[int, int]:
    """List's default order: newest created first, then the later task in the fold."""
    return (-created, -row)


def _line_element(fd: int, rid: str, start: int, length: int) -> tuple[bytes, bool]:
    """The element of the task whose winning line is at `start`: the record the fold
    keeps for it (parse_line: the same mending of tags), re-encoded."""
    try:
        raw = os.pread(fd, length, start)
    except OSError:
        raise Changed("the tasklist changed while it was read") from None
    record = parse_line(raw) if len(raw) == length else None
    if record is None or record.get("id") != rid or "type" in record:
        raise Changed("the tasklist changed while it was read")
    return element(record), not QUEUE_KEYS.isdisjoint(record)


NONE = b""  # the head of a listing without elements (no log to read them from)
Pieces = Iterator["bytes | memoryview"]


class _Section:
    """Writes a listing as it goes: its elements in list's order (section `j<code>`),
    then its head (`h<code>`: ids, fold rows, created stamps, offsets, the ids of tasks
    with a queue key of their own) — the elements are never held whole (232k open
    tasks at 5M events are ~100 MB), and `stats` reads the head alone (the open tasks'
    created stamps in order: ages and the oldest without a task's columns)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.rows, self.created, self.offsets = array("q"), array("q"), array("q", [0])
        self.foreign: set[str] = set()
        self.at = 0

    def one(self, rid: str, row: int, stamp: int, item: bytes, foreign: bool) -> bytes:
        self.ids.append(rid)
        self.rows.append(row)
        self.created.append(stamp)
        self.at += len(item)
        self.offsets.append(self.at)
        if foreign:
            self.foreign.add(rid)
        return item

    def run(self, old: Listing, a: int, b: int) -> memoryview:
        """Entries a..b-1 of `old`, as they are."""
        self.ids.extend(old.ids[a:b])
        self.rows.frombytes(old.rows[a:b].cast("B"))
        self.created.frombytes(old.created[a:b].cast("B"))
        base = old.offsets[a]
        self.offsets.extend(self.at + old.offsets[i] - base for i in range(a + 1, b + 1))
        self.at += old.offsets[b] - base
        self.foreign.update(rid for rid in old.ids[a:b] if rid in old.foreign)
        return old.blob[base:old.offsets[b]]

    def head(self) -> bytes:
        return marshal.dumps((_joined(self.ids), self.rows.tobytes(), self.created.tobytes(),
                              self.offsets.tobytes(), tuple(sorted(self.foreign))))


class Pair:
    """The two sections of one listing, written in this order: `elements` (made by
    `make` as it writes them), then `head` (what that gathered)."""

    def __init__(self, make: Callable[[_Section], Pieces] | None) -> None:
        self.out, self.make = _Section(), make

    def elements(self) -> Pieces:
        if self.make is not None:
            yield from self.make(self.out)

    def head(self) -> bytes:
        return NONE if self.make is None else self.out.head()


def build(fd: int | None, ids: Sequence[str], rows: Sequence[int], starts: Sequence[int],
          lengths: Sequence[int], created: Sequence[int]) -> Pair:
    """A fresh listing of the tasks at `rows` of the builder's columns (`ids` by row),
    their elements read back from the log one at a time."""
    def make(out: _Section) -> Pieces:
        assert fd is not None
        for r in sorted(rows, key=lambda r: order_key(created[r], r)):
            item, foreign = _line_element(fd, ids[r], starts[r], lengths[r])
            yield out.one(ids[r], r, created[r], item, foreign)

    return Pair(None if fd is None else make)


class Listing:
    """A loaded section: ids, rows, created stamps and elements, in list's order."""

    __slots__ = ("_ids", "blob", "created", "foreign", "joined", "offsets", "rows")

    def __init__(self, head: bytes, blob: bytes | None = None) -> None:
        joined, rows, created, offsets, foreign = marshal.loads(head)
        self.joined: str = joined
        self.foreign: frozenset[str] = frozenset(foreign)
        self.rows, self.created, self.offsets = _view(rows), _view(created), _view(offsets)
        self.blob = memoryview(b"" if blob is None else blob)
        self._ids: list[str] | None = None

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def ids(self) -> list[str]:
        if self._ids is None:
            self._ids = self.joined[:-1].split("\n") if self.joined else []
        return self._ids

    def id_at(self, k: int) -> str:
        """The id at position k, cut out of the joined ids from the nearer end."""
        if self._ids is not None:
            return self._ids[k]
        back = len(self.rows) - 1 - k
        if back < k:
            return self.joined[:-1].rsplit("\n", back + 1)[-1 - back]
        return self.joined.split("\n", k + 1)[k]


def load(head: bytes, blob: Callable[[], bytes] | None = None) -> Listing | None:
    """The listing of a head section (and its elements, read when `blob` is given);
    None for a listing without elements."""
    return Listing(head, None if blob is None else blob()) if head else None


def merge(old: Listing | None, drop: Iterable[int],
          add: Sequence[tuple[tuple[int, int], str, int, int,
                              Callable[[], tuple[bytes, bool]]]]) -> Pair:
    """`old` without the tasks at fold rows `drop`, with `add` (order key, id, row,
    created, a maker of the element) put in their places: runs of the old elements
    copied as they are."""
    return Pair(partial(_merge, old, set(drop), add))


def _merge(old: Listing | None, dropped: set[int],
           add: Sequence[tuple[tuple[int, int], str, int, int,
                               Callable[[], tuple[bytes, bool]]]], out: _Section) -> Pieces:
    made = sorted(((key, rid, row, stamp, *make()) for key, rid, row, stamp, make in add),
                  key=lambda entry: entry[0])
    if old is None:
        for _key, rid, row, stamp, item, foreign in made:
            yield out.one(rid, row, stamp, item, foreign)
        return
    rows, created = old.rows, old.created
    kept = [i for i in range(len(rows)) if rows[i] not in dropped] if dropped else range(len(rows))
    keys = [order_key(created[i], rows[i]) for i in kept]

    def take(first: int, stop: int) -> Pieces:  # kept[first:stop], in runs of old entries
        n = first
        while n < stop:
            run = n
            while run + 1 < stop and kept[run + 1] == kept[run] + 1:
                run += 1
            yield out.run(old, kept[n], kept[run] + 1)
            n = run + 1

    done = 0
    for key, rid, row, stamp, item, foreign in made:
        place = bisect_left(keys, key, done)
        yield from take(done, place)
        done = place
        yield out.one(rid, row, stamp, item, foreign)
    yield from take(done, len(kept))


# --- reading ---------------------------------------------------------------------------


class Listed:
    """Tasks in list's order as elements of its JSON array: `ids`, each one's status,
    their elements in `blob` (element i is `blob[offsets[i]:offsets[i + 1]]`), and the
    ids of tasks with a key of the work queue's of their own."""

    __slots__ = ("blob", "foreign", "ids", "offsets", "statuses")

    def __init__(self, ids: list[str], statuses: list[str], blob: bytes | memoryview,
                 offsets: Sequence[int], foreign: Collection[str]) -> None:
        self.ids, self.statuses, self.blob, self.offsets = ids, statuses, blob, offsets
        self.foreign = foreign

    def json(self, limit: int | None, keys: dict[int, bytes],
             more_of: Callable[[int], Record]) -> list[bytes | memoryview]:
        """The pieces of `tasks list --json`'s output for the first `limit` tasks, with
        the encoded queue keys `keys[i]` (encode_keys) written in before the closing
        brace of task i's element: what json_bytes gives for the same tasks with
        queue.with_extras, without a copy of the elements. A task with a queue key of
        its own is decoded and given `more_of(i)` instead."""
        n = len(self.ids) if limit is None else min(limit, len(self.ids))
        if n == 0:
            return [b"[]\n"]
        view, offsets, ids, foreign = memoryview(self.blob), self.offsets, self.ids, self.foreign
        close = len(_CLOSE)
        pieces: list[bytes | memoryview] = [b"[\n"]
        at = 0
        for i in sorted(p for p in keys if p < n):
            if ids[i] in foreign:
                pieces.append(view[offsets[at]:offsets[i]])
                record: Record = orjson.loads(view[offsets[i]:offsets[i + 1] - len(_SEPARATOR)])
                pieces.append(element({**record, **more_of(i)}))
            else:
                pieces.append(view[offsets[at]:offsets[i + 1] - close])
                pieces.append(b",\n")
                pieces.append(keys[i])
                pieces.append(_CLOSE)
            at = i + 1
        pieces.append(view[offsets[at]:offsets[n]])
        while not len(pieces[-1]):
            pieces.pop()
        last = pieces.pop()  # the last element ends with the separator: drop that
        pieces.append(memoryview(last)[:-len(_SEPARATOR)])
        pieces.append(b"\n]\n")
        return pieces


_CLOSE = b"\n  }" + _SEPARATOR  # how every element ends: a task is never an empty object
_BETWEEN = b"\n  },\n  {\n"  # between two objects of an indented array (never in a string)


def encode_keys(mores: list[Record]) -> list[bytes]:
    """Each non-empty `more` as the lines of its keys inside a listed element (at the
    depth of a task's own keys), for all of them with one orjson call."""
    if not mores:
        return []
    encoded = orjson.dumps(mores, option=_INDENT)  # [\n  {\n    "key": …\n  },\n  {…}\n]
    parts = encoded[len(b"[\n  {\n"):-len(b"\n  }\n]")].split(_BETWEEN)
    if len(parts) != len(mores):  # cannot happen for non-empty objects
        raise ValueError("an empty object among the queue keys")
    return parts


def merged(sources: list[tuple[Listing, str, set[int]]],
           extra: list[tuple[tuple[int, int], str, str, bytes, bool]]) -> Listed:
    """Sections (with their status and the rows to leave out) and `extra` elements
    (order key, id, status, element, foreign) put together in list's order."""
    foreign = {rid for one, _status, _skip in sources for rid in one.foreign}
    foreign.update(item[1] for item in extra if item[4])
    if len(sources) == 1 and not extra and not sources[0][2]:
        one, status, _skip = sources[0]
        return Listed(one.ids, [status] * len(one), one.blob, one.offsets, foreign)
    items: list[tuple[tuple[int, int], str, str, bytes | memoryview]] = [
        item[:4] for item in extra]
    for one, status, skip in sources:
        view, offsets, ids, rows, created = (memoryview(one.blob), one.offsets, one.ids,
                                             one.rows, one.created)
        items.extend((order_key(created[i], rows[i]), ids[i], status,
                      view[offsets[i]:offsets[i + 1]])
                     for i in range(len(one)) if rows[i] not in skip)
    items.sort(key=lambda item: item[0])
    offsets_out = array("q", [0])
    at = 0
    for item in items:
        at += len(item[3])
        offsets_out.append(at)
    return Listed([item[1] for item in items], [item[2] for item in items],
                  b"".join([item[3] for item in items]), offsets_out, foreign)
