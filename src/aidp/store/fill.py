"""Lines of the log into the store's rows: the cold build and the refresh of a tail.

Which record a line is and which record wins is decided by `aidp.fold` alone
(`read_line`, `key_of`, `beats`, and `settle` for the field-level merge): per id the
store keeps the winning record's fold key, so the rule can decide again when later
lines come, where its line is, and the columns the questions ask about. Nothing of a
task is decided here. For the field-level merge it also keeps which winners came with
a task_fields record (table `partial`) and the task_fields records still waiting for
their line (meta `pending`); a task whose merge is no single line (two clones changed
it concurrently) is folded from all its lines with `aidp.fields.merge_task`, and its
row points at that record (table `merged`, `off` -1) instead of a line.
"""

from __future__ import annotations

import os
import sqlite3
import zlib
from typing import Any

import orjson

from aidp.errors import StorageError
from aidp.fold import (
    CONFLICT,
    DAMAGED,
    FIELDS,
    LOSES,
    TASK,
    WINS,
    FoldKey,
    beats,
    companion_key,
    key_of,
    packed,
    read_line,
    read_lines,
    settle,
    task_tags,
    unpacked,
)
from aidp.model import UNKNOWN_TS, Record, finished_at, parse_ts_once, ts_of

CHUNK = 1 << 20  # the log is read this much at a time
# Winners held in memory before they are written: at 1M events (416k tasks) 20,000 made
# the cold build peak at 152 MB, 8,000 at 132 MB for the same CPU time (bench/RESULTS.md).
FLUSH_ROWS = 8_000
# A winner in the fill's map: fold.packed(key, seq << 2 | flags), flags telling whether
# it came with a task_fields record (the `partial` table) or is a merge (`merged`).
SEQ_MASK = (1 << 40) - 1
PARTIAL, MERGED = 1, 2

_TASK_SQL = "INSERT OR REPLACE INTO task VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_TYPED_SQL = "INSERT OR REPLACE INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def changed() -> StorageError:
    return StorageError(
        "The tasklist was rewritten by another program while it was read; run the "
        "command again"
    )


def read_span(fd: int, start: int, end: int) -> bytes:
    """Bytes start:end of the log, all of them (a file that shrank meanwhile: changed)."""
    data = os.pread(fd, end - start, start)
    while len(data) < end - start:
        more = os.pread(fd, end - start - len(data), start + len(data))
        if not more:
            raise changed()
        data += more
    return data


def _text(value: object) -> str | None:
    return value if type(value) is str else None


def task_row(seq: int, rid: str, key: FoldKey, off: int, size: int, record: Record
             ) -> tuple[Any, ...]:
    finished = finished_at(record)
    return (seq, rid, rid.rpartition("_")[2], key[0], key[1], off, size,
            _text(record.get("status")), _text(record.get("priority")),
            # created_at without model.parse_ts's cache: each task's is its own (misses)
            parse_ts_once(record.get("created_at")),
            key[0] if off >= 0 else ts_of(record),  # a line's updated_at is its key's
            UNKNOWN_TS if finished is None else finished, _text(record.get("session")))


class Filler:
    """Folds lines into the tables of an open write transaction. `empty`: the tables
    hold nothing yet (a cold build): no row needs looking up before it is replaced."""

    def __init__(self, conn: sqlite3.Connection, lines: int, damaged: int, *,
                 empty: bool, fielded: bool = False,
                 pending: dict[tuple[str, str], Record] | None = None) -> None:
        self.conn = conn
        self.fd = -1  # the log (feed)
        self.fielded = fielded  # the log holds task_fields records
        self.pending: dict[tuple[str, Any], Record] = dict(pending or {})
        self.partial: dict[str, bool] = {}  # changes to the `partial` table, to write
        self.lines, self.damaged = lines, damaged
        self.empty = empty
        # id -> the winner (SEQ_MASK's comment) of every id seen in this fill (and looked
        # up; None: not in the store): one int per id of the log.
        self.task_keys: dict[str, int | None] = {}
        self.typed_keys: dict[str, int | None] = {}
        self.tasks: dict[str, tuple[Any, ...]] = {}  # winners to write: (seq, key, off, …)
        self.flushed: dict[str, Record] = {}  # the winners the last flush wrote (fielded)
        self.typed: dict[str, tuple[Any, ...]] = {}
        self.written_before = lines + 1  # ids first seen before this line may be stored

    def feed(self, fd: int, start: int, end: int, crc: int) -> int:
        """Fold the whole lines start:end (end is a line's end) into the tables, and
        return the crc32 of the file up to `end`, given `crc` up to `start`."""
        at = start
        self.fd = fd
        while at < end:
            step = CHUNK
            while True:
                data = read_span(fd, at, min(end, at + step))
                cut = data.rfind(b"\n") + 1
                if cut:
                    break
                step *= 2  # a line longer than a chunk
            crc = zlib.crc32(memoryview(data)[:cut], crc)
            self._block(data, cut, at)
            at += cut
        self.flush()
        return crc

    def _block(self, data: bytes, cut: int, base: int) -> None:
        parts = data[:cut].split(b"\n")
        parts.pop()  # after the last newline: nothing
        off = base
        take, raws = self._take, iter(parts)
        for kind, rid, record in read_lines(parts):
            self.lines += 1
            raw = next(raws)
            if record is None:
                self.damaged += kind == DAMAGED
            else:
                take(kind == TASK, rid, record, off, raw)
            off += len(raw) + 1
            if len(self.tasks) + len(self.typed) >= FLUSH_ROWS:
                self.flush()

    def _take(self, is_task: bool, rid: str, record: Record, off: int, raw: bytes) -> None:
        size = len(raw)
        if not is_task and record["type"] == FIELDS:
            if self.empty and not self.fielded:  # winners are looked up by id from now on
                self.conn.execute("CREATE UNIQUE INDEX IF NOT EXISTS task_id ON task(id)")
            self.fielded = True
            waiting = companion_key(record)
            if waiting is not None:
                self.pending[waiting] = record
            return
        keys = self.task_keys if is_task else self.typed_keys
        if rid in keys:
            known = keys[rid]
        else:
            known = None if self.empty else self._lookup(is_task, rid)
        key = key_of(record, self.lines)
        if is_task and self.fielded:
            self._settle(rid, record, key, known, off, size)
            return
        if known is not None and packed(key) <= known:  # not fold.beats, packed
            keys[rid] = known
            return
        seq = self.lines if known is None else (known & SEQ_MASK) >> 2
        keys[rid] = packed(key, seq << 2)
        if is_task:  # its row is made when written: most records lose before that
            self.tasks[rid] = (seq, rid, key, off, size, record)
        else:
            self.typed[rid] = (seq, rid, key[0], key[1], off, size, raw,
                               _text(record.get("task")), _text(record.get("blocked_by")),
                               _text(record.get("parent")), _text(record.get("type")),
                               record.get("removed") is True)

    def _settle(self, rid: str, record: Record, key: FoldKey, known: int | None,
                off: int, size: int) -> None:
        """A task record, once the log holds task_fields records: fold.settle decides
        (a task merged already stays merged: CONFLICT)."""
        spec = self.pending.pop((rid, record.get("updated_at")), None) if self.pending else None
        flags = 0
        if known is None:
            seq, verdict = self.lines, WINS
        else:
            old, field = unpacked(known)
            seq, flags = field >> 2, field & 3
            if flags & MERGED:
                verdict = CONFLICT
            elif spec is None and not flags & PARTIAL:
                verdict = WINS if beats(key, old) else LOSES
            else:
                verdict = settle(self._winner(rid), old, bool(flags & PARTIAL), record, key,
                                 spec)
            if verdict == CONFLICT:  # folded from all its lines: a record, not a line
                key = max(key, old)
                self.task_keys[rid] = packed(key, seq << 2 | flags | MERGED)
                self.tasks[rid] = (seq, rid, key, -1, 0, self._merge(rid, off + size))
                return
            if verdict == LOSES:
                self.task_keys[rid] = known
                return
        partial = PARTIAL if spec is not None else 0
        if partial != flags & PARTIAL:
            self.partial[rid] = bool(partial)
        self.task_keys[rid] = packed(key, seq << 2 | partial)
        self.tasks[rid] = (seq, rid, key, off, size, record)

    def _merge(self, rid: str, end: int) -> Record:
        """The task folded field by field from all its lines in the log up to `end`."""
        from aidp.fields import merge_task

        needle = orjson.dumps(rid)
        entries: list[tuple[Record, FoldKey, Record | None]] = []
        waiting: dict[tuple[Any, Any], Record] = {}
        number, at = 0, 0
        while at < end:
            data = read_span(self.fd, at, min(end, at + CHUNK))
            cut = data.rfind(b"\n") + 1 if at + len(data) < end else len(data)
            if not cut:
                data, cut = read_span(self.fd, at, end), end - at  # a very long line
            for raw in data[:cut].split(b"\n"):
                number += 1
                if needle not in raw:
                    continue
                kind, found, record = read_line(raw)
                if record is None:
                    continue
                if kind == TASK and found == rid:
                    spec = waiting.pop((rid, record.get("updated_at")), None)
                    entries.append((record, key_of(record, number), spec))
                elif record.get("type") == FIELDS and record.get("task") == rid:
                    waiting[(rid, record.get("updated_at"))] = record
            number -= data[:cut].endswith(b"\n")  # the split's empty last part
            at += cut
        return merge_task(entries)

    def _winner(self, rid: str) -> Record:
        """The task's winning record so far (read back from its line once written)."""
        if rid in self.tasks:
            return self.tasks[rid][5]  # type: ignore[no-any-return]
        if rid in self.flushed:
            return self.flushed[rid]
        off, size = self.conn.execute("SELECT off, len FROM task WHERE id = ?",
                                      (rid,)).fetchone()
        _kind, _rid, record = read_line(read_span(self.fd, off, off + size))
        if record is None:
            raise changed()
        return record

    def _lookup(self, is_task: bool, rid: str) -> int | None:
        """The stored winner's packed key, seq and flags (None: the id is new)."""
        if is_task:
            sql = ("SELECT ts, line, seq, EXISTS(SELECT 1 FROM partial WHERE id = ?1) "
                   "+ 2 * EXISTS(SELECT 1 FROM merged WHERE id = ?1) FROM task WHERE id = ?1")
        else:
            sql = "SELECT ts, line, seq, 0 FROM typed WHERE id = ?1"
        row = self.conn.execute(sql, (rid,)).fetchone()
        return None if row is None else packed((row[0], row[1]), row[2] << 2 | row[3])

    def flush(self) -> None:
        conn = self.conn
        merged: list[tuple[str, str]] = []
        if self.tasks:
            pending = [(task_row(*winner), task_tags(winner[5]))
                       for winner in sorted(self.tasks.values(), key=lambda item: item[0])]
            merged = [(winner[1], orjson.dumps(winner[5]).decode())
                      for winner in self.tasks.values() if winner[3] == -1]
            if self.fielded:  # settle asks for winners: the last flush's, without a read
                self.flushed = {winner[1]: winner[5] for winner in self.tasks.values()}
            self.tasks = {}
            conn.executemany(_TASK_SQL, [row for row, _tags in pending])
            if not self.empty:
                conn.executemany("DELETE FROM tag WHERE seq = ?",
                                 [(row[0],) for row, _tags in pending])
            else:  # tasks first seen in an earlier flush may have tags stored
                conn.executemany("DELETE FROM tag WHERE seq = ?",
                                 [(row[0],) for row, _tags in pending
                                  if row[0] < self.written_before])
            conn.executemany("INSERT INTO tag VALUES (?, ?, ?, ?)",
                             [(row[0], tag, row[7], row[8]) for row, tags in pending
                              for tag in tags])
        if self.typed:
            conn.executemany(_TYPED_SQL, sorted(self.typed.values()))
            self.typed = {}
        if merged:
            conn.executemany("INSERT OR REPLACE INTO merged VALUES (?, ?)", merged)
        if self.partial:
            conn.executemany("INSERT OR IGNORE INTO partial VALUES (?)",
                             [(rid,) for rid, on in self.partial.items() if on])
            conn.executemany("DELETE FROM partial WHERE id = ?",
                             [(rid,) for rid, on in self.partial.items() if not on])
            self.partial = {}
        self.written_before = self.lines + 1
