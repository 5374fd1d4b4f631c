"""Lines of the log into the store's rows, in two passes (docs/store.md): every
line folded into one int per id (`entry`), then a row for each winning line. Which
record wins is decided by `aidp.tasklist.fold` alone, a merged task's record by
`aidp.tasklist.fields`.
"""

from __future__ import annotations

import sqlite3
import zlib
from operator import itemgetter
from typing import Any

import orjson

from aidp.core import model
from aidp.core.model import OPEN_STATUSES, UNKNOWN_TS, Record, finished_at, parse_ts_once, ts_of
from aidp.store import shown
from aidp.tasklist import fold
from aidp.tasklist.fields import merge_all
from aidp.tasklist.fold import FoldKey
from aidp.tasklist.line import blocks, changed, read_span, reread
from aidp.tasklist.questions import TASK_TYPE

FLUSH_ROWS = 2_000  # rows per write; 4x that many winners kept for settle
SEQ_MASK = (1 << 40) - 1
PARTIAL, MERGED = 1, 2  # a winner's flags: it came with a task_fields record; a merge
SPAN = 80  # entry(): fold.packed(key, seq << 2 | flags) << SPAN | off << 40 | len
SPAN_MASK = (1 << SPAN) - 1
_LINE_SHIFT = SPAN + 40  # where the winning line's number starts in an entry
MEMORY = 1 << 39  # lines fed by Filler.add are "at" MEMORY + where they are in its `text`

_TASK_SQL = "INSERT OR REPLACE INTO task VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_TYPED_SQL = "INSERT OR REPLACE INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
# A task's type record's value is a column of its row (`list --type` is one query:
# store.questions).
TYPE = TASK_TYPE


def entry(key: FoldKey, seq: int, flags: int, off: int, size: int) -> int:
    """One id's winner as one int (a tuple of tuples took 200 bytes a winner at 1M)."""
    return fold.packed(key, seq << 2 | flags) << SPAN | off << 40 | size


def _text(value: object) -> str | None:
    return value if type(value) is str else None


def task_row(seq: int, rid: str, key: FoldKey, off: int, size: int, record: Record,
             partial: int) -> tuple[Any, ...]:
    updated = key[0] if off >= 0 else ts_of(record)  # a line's updated_at is its key's
    finished = finished_at(record, updated)
    status = _text(record.get("status"))
    return (seq, rid, rid.rpartition("_")[2], key[0], key[1], off, size, partial,
            status, _text(record.get("priority")),
            parse_ts_once(record.get("created_at")),  # each task's own: no cache
            updated, UNKNOWN_TS if finished is None else finished,
            _text(record.get("session")),
            # an open task's record as `tasks list --json` prints it (aidp.store.questions: listed)
            bytes(model.json_elements([record])) if status in OPEN_STATUSES else None,
            None)  # shown: set by store.shown once the fill's typed rows are in


class Filler:
    """Folds lines into the tables of an open write transaction. `empty`: the tables
    hold nothing yet (a cold build): no id needs looking up."""

    def __init__(self, conn: sqlite3.Connection, lines: int, damaged: int, *,
                 empty: bool, fielded: bool = False,
                 pending: dict[tuple[str, str], Record] | None = None) -> None:
        self.conn, self.fd, self.end, self.empty = conn, -1, 0, empty
        self.fielded = fielded  # the log holds task_fields records
        self.pending: dict[tuple[str, Any], Record] = dict(pending or {})
        self.lines, self.damaged = lines, damaged
        self.first = lines + 1  # winners on this line or later are written
        # id -> entry() of every id seen in this fill (None: looked up, not stored)
        self.task_keys: dict[str, int | None] = {}
        self.typed_keys: dict[str, int | None] = {}
        self.recent: dict[str, Record] = {}  # winners' records, for settle
        self.older: dict[str, Record] = {}  # (the generation before)
        self.merged: set[str] = set()  # tasks whose record is a merge of their lines
        self.text = b""  # the lines fed from memory (`add`)
        self.touched: set[str] = set()  # tasks whose row or own typed records were written

    def feed(self, fd: int, start: int, end: int, crc: int) -> int:
        """Fold the whole lines start:end (end is a line's end) into the tables, and
        return the crc32 of the file up to `end`, given `crc` up to `start`."""
        self.fd, self.end = fd, end
        for at, data in blocks(fd, start, end):
            crc = zlib.crc32(data, crc)
            self._block(data, at)
        self.write()
        return crc

    def add(self, lines: list[bytes]) -> None:
        """Fold lines held in memory (not the log's), after those folded so far; `write`
        then writes their winners' rows too, and `line` reads one back."""
        data = b"".join(raw + b"\n" for raw in lines)
        off = MEMORY + len(self.text)
        self.text += data
        self._block(data, off)

    def line(self, span: int) -> bytes:
        """The line at an entry's span (offset << 40 | length), from the log or memory."""
        off, size = span >> 40, span & SEQ_MASK
        if off >= MEMORY:
            return self.text[off - MEMORY:off - MEMORY + size]
        return read_span(self.fd, off, off + size)

    def _block(self, data: bytes, off: int) -> None:
        parts = data.split(b"\n")
        parts.pop()  # after the last newline: nothing
        take, line, tasks, empty = self._take, self.lines, self.task_keys, self.empty
        for raw, (kind, rid, record) in zip(parts, fold.read_lines(parts), strict=True):
            line += 1
            size = len(raw)
            if record is None:
                self.damaged += kind == fold.DAMAGED
            elif kind == fold.TASK and not self.fielded and (empty or rid in tasks):
                # _take's usual case, inline (a call less per line): fold.packed of the
                # line's key against the known winner's, which wins on a greater one
                won = (parse_ts_once(record.get("updated_at")) - UNKNOWN_TS) << 80 | line << 40
                known = tasks.get(rid)
                if known is None:
                    tasks[rid] = (won | line << 2) << SPAN | off << 40 | size
                elif won > known >> SPAN:
                    tasks[rid] = (won | (known >> SPAN & SEQ_MASK) >> 2 << 2) << SPAN \
                        | off << 40 | size
            else:
                take(kind == fold.TASK, rid, record, line, off, size)
            off += size + 1
        self.lines = line

    def _take(self, is_task: bool, rid: str, record: Record, line: int, off: int,
              size: int) -> None:
        if not is_task and record["type"] == fold.FIELDS:
            self.fielded = True
            fold.hold(self.pending, record)
            return
        keys = self.task_keys if is_task else self.typed_keys
        if rid in keys:
            known = keys[rid]
        else:
            known = keys[rid] = None if self.empty else self._lookup(is_task, rid)
        key = fold.key_of(record, line)
        if is_task and self.fielded:
            self._settle(rid, record, key, known, line, off, size)
        elif known is None or fold.packed(key) > known >> SPAN:  # fold.beats, packed
            seq = line if known is None else (known >> SPAN & SEQ_MASK) >> 2
            keys[rid] = entry(key, seq, 0, off, size)

    def _settle(self, rid: str, record: Record, key: FoldKey, known: int | None,
                line: int, off: int, size: int) -> None:
        """A task record, once the log holds task_fields records: fold.settle decides
        (a task merged already stays merged: fold.CONFLICT)."""
        spec = self.pending.pop((rid, record.get("updated_at")), None) if self.pending else None
        seq, verdict = line, fold.WINS
        if known is not None:
            old, field = fold.unpacked(known >> SPAN)
            seq, flags = field >> 2, field & 3
            if flags & MERGED:
                verdict = fold.CONFLICT
            elif spec is None and not flags & PARTIAL:  # (settle's answer, no record read)
                verdict = fold.WINS if fold.beats(key, old) else fold.LOSES
            else:  # the winner's record: a recent one's, else read back from its line
                current = (self.recent.get(rid) or self.older.get(rid)
                           or fold.read_line(self.line(known & SPAN_MASK))[2])
                if current is None:
                    raise changed()
                verdict = fold.settle(current, old, bool(flags & PARTIAL), record, key, spec)
            if verdict == fold.CONFLICT:  # its record: folded from all its lines
                self.merged.add(rid)
                self.task_keys[rid] = entry(max(key, old), seq, flags | MERGED, 0, 0)
        if verdict == fold.WINS:
            self.task_keys[rid] = entry(key, seq, 0 if spec is None else PARTIAL, off, size)
            if len(self.recent) >= 4 * FLUSH_ROWS:
                self.older, self.recent = self.recent, {}
            self.recent[rid] = record

    def _lookup(self, is_task: bool, rid: str) -> int | None:
        """The stored winner's entry() (None: the id is new); a task row at offset -1 is
        a merge (its record is in `merged`)."""
        found = ("partial + 2 * (off < 0), max(off, 0), len FROM task" if is_task
                 else "0, off, len FROM typed")
        row = self.conn.execute(f"SELECT ts, line, seq, {found} WHERE id = ?",
                                (rid,)).fetchone()
        return None if row is None else entry((row[0], row[1]), *row[2:])

    def write(self) -> None:
        """The second pass: a row for each winner this fill found, its line read again,
        in the order of the rows (seq: a table written in its key's order is written
        once, page after page; in file order, pages were split and read back, and the
        table was left ~40% full); then the merged tasks, folded from their lines in
        one pass."""
        first, line = self.first, self.line
        spans = sorted([(value >> SPAN & SEQ_MASK) << SPAN | value & SPAN_MASK
                        for keys in (self.task_keys, self.typed_keys)
                        for value in keys.values() if value is not None
                        and value >> _LINE_SHIFT & SEQ_MASK >= first
                        and value & SPAN_MASK])  # no span: a merge
        for at in range(0, len(spans), FLUSH_ROWS):
            rows = []
            for ordered in spans[at:at + FLUSH_ROWS]:
                span = ordered & SPAN_MASK
                raw = line(span + 1)  # and its newline: a line moved since says so
                if raw[-1:] != b"\n":
                    raise changed()
                rows.append((span >> 40, raw[:-1], reread(raw[:-1])))
            self._rows(rows)
        del spans
        if self.merged:
            found = merge_all(self.merged, (data for _at, data in blocks(self.fd, 0, self.end)))
            self._rows([(-1, b"", record) for record in found.values()])
            self.conn.executemany("INSERT OR REPLACE INTO merged VALUES (?, ?)",
                                  [(rid, orjson.dumps(r).decode()) for rid, r in found.items()])
        shown.refresh(self.conn, None if self.empty else self.touched)

    def _rows(self, winners: list[tuple[int, bytes, Record | None]]) -> None:
        """The rows of winners (offset, line, record; a merged task's at offset -1, with
        no line). A replaced task row's tags go with it (a trigger, db.INDEXES)."""
        tasks, typed = [], []
        for off, raw, record in winners:
            if record is None:  # (reread: admitted by the first pass, not checked again)
                raise changed()
            is_task, rid = "type" not in record, str(record.get("id"))
            value = (self.task_keys if is_task else self.typed_keys).get(rid)
            if value is None or (off >= 0 and value & SPAN_MASK != off << 40 | len(raw)):
                raise changed()  # not the line the first pass read there
            key, field = fold.unpacked(value >> SPAN)
            if is_task:
                tasks.append((field >> 2, rid, key, off, len(raw), record, field & PARTIAL))
            else:
                typed.append((field >> 2, rid, key[0], key[1], off, len(raw), raw,
                              _text(record.get("task")), _text(record.get("blocked_by")),
                              _text(record.get("parent")), _text(record.get("type")),
                              record.get("removed") is True,
                              _text(record.get(TYPE)) if record.get("type") == TYPE else None))
        self.touched.update(winner[1] for winner in tasks)
        self.touched.update(row[7] for row in typed if row[7] is not None)
        if typed and not self.empty:  # a replaced record's task, if it named another
            self.touched.update(task for (task,) in self.conn.execute(
                "SELECT task FROM typed WHERE task IS NOT NULL AND id IN (SELECT value FROM "
                "json_each(?))", (orjson.dumps([row[1] for row in typed]).decode(),)))
        tasks.sort(key=itemgetter(0))
        rows = [task_row(*winner) for winner in tasks]
        self.conn.executemany(_TASK_SQL, rows)
        self.conn.executemany("INSERT INTO tag VALUES (?, ?, ?, ?)",
                              [(row[0], tag, row[8], row[9])
                               for row, winner in zip(rows, tasks, strict=True)
                               for tag in fold.task_tags(winner[5])])
        self.conn.executemany(_TYPED_SQL, sorted(typed, key=itemgetter(0)))


def resumed(conn: sqlite3.Connection, meta: dict[str, Any], *, empty: bool) -> Filler:
    """A Filler that goes on from the state a fill left in the meta row (`state`)."""
    pending = meta.get("pending")
    return Filler(conn, meta["lines"], meta["damaged"], empty=empty,
                  fielded=bool(meta.get("fielded")),
                  pending={(t, u): r for t, u, r in orjson.loads(pending)} if pending else None)


def state(filler: Filler, end: int, crc: int) -> dict[str, Any]:
    """What a later fill needs to go on after this one (the meta row's keys): the prefix
    covered up to `end` and its `crc`, the counts, the task_fields records waiting."""
    return {"offset": end, "crc": crc, "lines": filler.lines, "damaged": filler.damaged,
            "fielded": int(filler.fielded),
            "pending": orjson.dumps([[t, u, r] for (t, u), r in filler.pending.items()]).decode()}
