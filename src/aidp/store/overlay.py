"""Every worktree's tasklist through this worktree's store (the rule: aidp.tasklist.worktrees;
`make_plan`: which lines go where): the others' lines folded on top by the fill, in a
transaction the fold keeps open and never commits (it holds the store's write lock
until the fold is dropped).
A client of the store's public seam (`loader.attempt`'s overlay, `fill.Filler.add`):
the store knows nothing of worktrees. `load_shared` is what a `TaskLog` reads several
worktrees' tasklists through (its reader: aidp.app.project.StoreReader).
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
import weakref
import zlib
from typing import TYPE_CHECKING, Any

import orjson

from aidp.core.errors import StorageError
from aidp.store.fill import MEMORY, SPAN_MASK, resumed
from aidp.store.loader import PLAIN_MAX, RACY_NS, Builder, attempt
from aidp.store.questions import StoreFold
from aidp.tasklist import worktrees
from aidp.tasklist.files import read_regular, write_file
from aidp.tasklist.fold import read_line
from aidp.tasklist.line import last_line_end
from aidp.tasklist.stamp import cache_folder

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

    from aidp.tasklist.fold import Fold
    from aidp.tasklist.log import TaskLog

MEMO_NAME = "worktrees.json"  # in the store's cache folder: how far each other file is ours
# This process's live fold holding each store's write transaction (by its log's folder): the
# next read of that store here takes it over in memory first (load_shared).
_HOLDING: weakref.WeakValueDictionary[str, StoreFold] = weakref.WeakValueDictionary()


class Plan:
    """How a store of this worktree's tasklist answers for every worktree (the rule:
    worktrees.fold): the store holds this file up to `end`, whose last `own_lines` lines
    (`own_ids` the ids they name) come after the lines every tasklist starts with; the other
    tasklists' lines after those are fed `before` and `after` this file's. `crc`: the
    crc32 of this file up to `end` as the plan took it (the memo's crc up to where it
    was not read; None: no other file, nothing taken): unless the store's is the same,
    the plan is not this file's. `both`: the ids this file's lines and `before` name."""

    def __init__(self, end: int, own_lines: int, own_ids: set[str], before: list[bytes],
                 after: list[bytes], crc: int | None, both: set[str]) -> None:
        self.end, self.own_lines, self.own_ids = end, own_lines, own_ids
        self.before, self.after, self.crc, self.both = before, after, crc, both

    def fed_alike(self, conn: sqlite3.Connection, common: int) -> bool:
        """Whether the store, `before` fed after this file's lines, folds as the rule
        (`before` first): so for the ids both name (a task claimed in one worktree and
        changed in this one) when each came first in the lines every tasklist shares
        (its place, `seq`, is the rule's): the rest of the fold is by key (time, line:
        this file's lines are moved down past `before`), whatever the order of feeding."""
        return not self.both or conn.execute(
            "SELECT EXISTS(SELECT 1 FROM task WHERE id IN (SELECT value FROM json_each(?1)) "
            "AND seq > ?2 UNION ALL SELECT 1 FROM typed WHERE id IN (SELECT value FROM "
            "json_each(?1)) AND seq > ?2)", (orjson.dumps(sorted(self.both)).decode(),
                                            common)).fetchone()[0] == 0


def _opened(path: Path) -> tuple[int, os.stat_result, int] | None:
    """(fd, stat, end of its last whole line) of a regular file, or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return None
    return fd, st, last_line_end(fd, st.st_size)


def _tail_counts(fd: int, size: int, end: int) -> bool:
    """Whether another tasklist's last line without its newline (from `end` to `size`)
    folds a record (worktrees.tail_counts); a very long one: as if it did."""
    if size == end:
        return False
    return size - end > worktrees.TAIL_MAX or worktrees.tail_counts(os.pread(fd, size - end, end))


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _stat_key(st: os.stat_result, now: int) -> list[int]:
    """What the memo keeps of a file's stat data: all of it once older than RACY_NS,
    else its inode only (and a size no file has: never taken for unchanged)."""
    if now - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
        return [st.st_dev, st.st_ino, -1, 0, 0]
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _crc(fd: int, end: int) -> int:
    """The crc32 of a file's first `end` bytes, read a megabyte at a time (-1: shorter)."""
    crc, at = 0, 0
    while at < end:
        data = os.pread(fd, min(end - at, 1 << 20), at)
        if not data:
            return -1
        crc, at = zlib.crc32(data, crc), at + len(data)
    return crc


def _memo_prefix(was: Any, other: tuple[int, os.stat_result, int], end: int
                 ) -> tuple[int, int]:
    """(length, crc32) of the whole lines another tasklist (`other`: fd, stat, end of
    its whole lines) and this one (`end`: the anchor's offset, or less) start with, as
    the memo `was` holds them: [their stat key, the length, its crc]; (0, 0) once the
    other file is another, shorter than that, or, its stat data changed since, no longer
    has that crc there (rewritten in place, not appended to)."""
    if not (isinstance(was, list) and len(was) == 3 and isinstance(key := was[0], list)
            and len(key) == 5 and type(was[1]) is int and type(was[2]) is int):
        return 0, 0
    (fd, st, f_end), prefix, crc = other, was[1], was[2]
    if key[:2] != [st.st_dev, st.st_ino] or not 0 < prefix <= min(f_end, end):
        return 0, 0
    if key != [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns] and (
            _crc(fd, prefix) != crc):
        return 0, 0
    return prefix, crc


def _ids(lines: list[bytes]) -> set[str]:
    """The ids lines name: a task's, a typed record's, the task a task_fields names."""
    from aidp.tasklist.fold import read_lines

    found: set[str] = set()
    for _kind, rid, record in read_lines(lines):
        if record is not None:
            found.add(rid)
            if isinstance(task := record.get("task"), str):
                found.add(task)
    return found


Opened = tuple[int, os.stat_result, int]  # a tasklist open: fd, stat, end of its whole lines


def make_plan(tasklists: list[tuple[Path, bool]], own_path: Path, cache: Path | None, *,
              whole_lines: bool) -> Plan | None:
    """The plan, or None: fold plainly (a tasklist that is not a regular UTF-8 file, a
    line being written here, a line or an id of this file's also in a tasklist fed
    before it: the store's order would not be the rule's). How far each other file
    shares this one's lines is kept in `cache` (MEMO_NAME) with its crc32 and the other
    file's stat data: while that is the same, the other file is not read again; once it
    changed, its crc up to there is (an append keeps it, a rewrite in place does not);
    this file is checked against the store's crc (`Plan.crc`); only the bytes past the
    prefix are compared."""
    opened: list[Opened] = []
    try:
        names = _open_all(opened, tasklists, own_path)
        if names is None:
            return None
        (own, own_st, end), others = opened[0], opened[1:]
        if not whole_lines and own_st.st_size != end:
            return None  # a line being written here: the plain fold decides
        if not whole_lines and any(_tail_counts(fd, st.st_size, f_end)
                                   for fd, st, f_end in others):
            return None  # another's last record without its newline: the plain fold
        known = _read_memo(cache)
        rest, start, crc, memo = _shared(own, end, dict(zip(names, others, strict=True)),
                                         known)
        placed = _placed(tasklists, dict(zip(names, others, strict=True)),
                         worktrees.lines_of(rest), start)
        if placed is None:
            return None
        before, after, own_lines = placed
        own_ids = _ids(own_lines)
        if cache is not None and memo != known:  # never through a link; a torn one: {}
            with contextlib.suppress(OSError, StorageError):
                write_file(cache, MEMO_NAME, orjson.dumps(memo))
        return Plan(end, len(own_lines), own_ids, before, after, crc,
                    own_ids & _ids(before) if before else set())
    finally:
        for fd, _st, _end in opened:
            os.close(fd)


def _open_all(opened: list[Opened], tasklists: list[tuple[Path, bool]], own_path: Path
              ) -> list[str] | None:
    """Open this worktree's tasklist, then each other one that brings lines, into
    `opened` (the caller closes them); the others' names. None: this one has no lines
    as `fold` reads it (not a regular file, not UTF-8 text)."""
    from aidp.tasklist.attributes import SNIFF_BYTES, sniff

    names: list[str] = []
    for path in [own_path] + [p for p, is_own in tasklists if not is_own]:
        found = _opened(path)
        if found is not None and (not found[2] or sniff(os.pread(
                found[0], SNIFF_BYTES, 0)) is not None):  # as `fold` reads it: no lines
            os.close(found[0])
            found = None
        if found is None:
            if path == own_path:
                return None
            continue
        opened.append(found)
        names.append(str(path))
    return names[1:]


def _read_memo(cache: Path | None) -> dict[str, Any]:
    """The memo of how far each other tasklist shares this one ({}: none, or torn)."""
    known: Any = {}
    if cache is not None:
        with contextlib.suppress(orjson.JSONDecodeError):
            known = orjson.loads(read_regular(cache / MEMO_NAME) or b"{}")
    return known if isinstance(known, dict) else {}


def _shared(own: int, end: int, others: dict[str, Opened], known: dict[str, Any]
            ) -> tuple[bytes, int, int | None, dict[str, Any]]:
    """How far every other tasklist shares this one's lines (`own` open, its whole lines
    to `end`): this file's bytes past the shortest of those prefixes, where that is, the
    crc32 of this file to `end` (None: no other file), and the memo to keep. Only what
    the memo does not vouch for is read (from the lowest prefix it holds)."""
    bases = [_memo_prefix(known.get(name), other, end) for name, other in others.items()]
    low = min((base for base, _crc in bases), default=end)
    ours = os.pread(own, end - low, low)
    low_crc = next((crc for base, crc in bases if base == low), 0)
    if any(zlib.crc32(ours[:base - low], low_crc) != crc for base, crc in bases):
        bases, low = [(0, 0)] * len(bases), 0  # not this file's prefix (then): all of it
        ours, low_crc = os.pread(own, end, 0), 0
    memo: dict[str, Any] = {}
    prefixes, now = [], time.time_ns()
    for (name, (fd, st, f_end)), (base, base_crc) in zip(others.items(), bases, strict=True):
        theirs = os.pread(fd, f_end - base, base)
        prefix = base + worktrees.shared_prefix(ours[base - low:], theirs)
        memo[name] = [_stat_key(st, now), prefix, zlib.crc32(ours[base - low:prefix - low],
                                                               base_crc)]
        prefixes.append(prefix)
    start = min(prefixes, default=end)
    return ours[start - low:], start, zlib.crc32(ours, low_crc) if bases else None, memo


def _placed(tasklists: list[tuple[Path, bool]], others: dict[str, Opened],
            own_lines: list[bytes], start: int
            ) -> tuple[list[bytes], list[bytes], list[bytes]] | None:
    """The other tasklists' lines past `start`, in the rule's order, fed before and after
    this file's (`own_lines`, the ones it does not share), and this file's lines the
    store does not already hold where the rule puts them; None when the rule leaves out
    a line of this file (one an earlier tasklist brought)."""
    seen: set[bytes] = set()
    before: list[bytes] = []
    after: list[bytes] = []
    target = before
    for path, is_own in tasklists:
        if str(path) not in others and not is_own:
            continue
        if is_own:  # its first lines that come first in the earlier files' too (a
            same = 0  # later commit this worktree branched from) are where the store has them
            while same < min(len(own_lines), len(before)) and own_lines[same] == before[same]:
                same += 1
            del own_lines[:same], before[:same]
            if any(raw in seen for raw in own_lines):
                return None  # the rule leaves out this file's copy: not the store's lines
            seen.update(own_lines)
            target = after
            continue
        fd, _st, f_end = others[str(path)]
        lines = worktrees.lines_of(os.pread(fd, f_end - start, start))
        target += [raw for raw in lines if raw not in seen]
        seen.update(lines)
    return before, after, own_lines


def load_shared(log: TaskLog, tasklists: list[tuple[Path, bool]], *,
                whole_lines: bool = False, builder: Builder | None = None) -> Fold | None:
    """The fold of every worktree's tasklist (worktrees.fold), or None: fold plainly.
    `builder`: as loader.load's."""
    total = sum(_size(path) for path, _ in tasklists)
    cache = cache_folder(log.dir, create=False)
    try:
        plan = make_plan(tasklists, log.path, cache, whole_lines=whole_lines)
    except OSError:
        return None
    wrong: list[bool] = []  # the memo's prefixes are not this file's (rewritten in place)

    def apply(conn: sqlite3.Connection, meta: dict[str, Any], fold: StoreFold, fd: int
              ) -> bool:
        if plan is None or meta["offset"] != plan.end:
            return False  # (the file grew since the plan)
        if plan.crc is not None and meta["crc"] != plan.crc:
            wrong.append(True)
            return False
        common, shift = meta["lines"] - plan.own_lines, len(plan.before)
        if plan.both and (meta.get("fielded") or not plan.fed_alike(conn, common)):
            return False  # a task changed in both, merged by order, or new in both
        # Never committed: its pages must never reach the file, even in part (a page cache
        # spilled mid-transaction is rolled back, but the file's stat data has changed: the
        # next read takes the store for changed by another program and rebuilds it).
        conn.execute("PRAGMA cache_spill=OFF")
        conn.execute("BEGIN")
        for table in ("task", "typed", "tag") if shift else ():  # this file's lines move
            conn.execute(f"UPDATE {table} SET seq = -seq - ? WHERE seq > ?", (shift, common))
            conn.execute(f"UPDATE {table} SET seq = -seq WHERE seq < 0")  # down past them
            if table != "tag":
                conn.executemany(f"UPDATE {table} SET line = line + ? WHERE id = ? AND line "
                                 "> ?", [(shift, rid, common) for rid in plan.own_ids])
        fill = resumed(conn, {**meta, "lines": common, "damaged": 0}, empty=False)
        fill.fd, fill.end = fd, plan.end  # the store's winners are read from this log
        fill.add(plan.before)
        if plan.both and fill.fielded:
            return False  # (task_fields records came in `before`: merged by order)
        fill.lines = meta["lines"] + shift
        fill.add(plan.after)
        if fill.merged:
            return False  # a task changed in two worktrees: its lines are in several files
        fill.write()
        won = [(rid, fill.line(v & SPAN_MASK)) for rid, v in fill.task_keys.items()
               if v is not None and (v & SPAN_MASK) >> 40 >= MEMORY]
        conn.executemany("UPDATE task SET off = -1, len = 0 WHERE id = ?",
                         [(rid,) for rid, _raw in won])  # read from `merged`, not the log
        conn.executemany("INSERT OR REPLACE INTO merged VALUES (?, ?)",
                         [(rid, orjson.dumps(read_line(raw)[2]).decode()) for rid, raw in won])
        fold.lines = fill.lines
        return True

    if plan is None:
        return None
    if builder is not None and total >= PLAIN_MAX:
        builder = None  # while it builds, reads fold every tasklist plainly: too much held
    if (holding := _HOLDING.pop(str(log.dir), None)) is not None:
        # A fold this process still holds (a command's read before its write) keeps the
        # store's write lock: it would make this read wait for it (db.BUSY_SECONDS),
        # then fold every file plainly — under the repository's lock, for a write.
        holding.rows.handle.to_memory()
    found = attempt(log, whole_lines=whole_lines, overlay=apply, builder=builder)
    if isinstance(found, StoreFold):
        _HOLDING[str(log.dir)] = found
    if wrong and cache is not None:  # the next read compares the files in full
        with contextlib.suppress(OSError, StorageError):
            write_file(cache, MEMO_NAME, b"{}")
    return found

