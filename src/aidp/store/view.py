"""The `Fold` a read through the store returns: mappings that ask the database.

`tasks[id]` reads the winning line where the store says it is (pread on the log's
descriptor, opened before the store was checked against it) and decodes it with
`aidp.fold.reread`: the record parse_line gave when the line was folded. A line
that is not there any more (the file was rewritten in place meanwhile) is an error
that says so, never another record. Each question is one query (one consistent state
of the store); one asked after another process folded lines appended since this read
may see them (aidp.store.loader says why), never anything else.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

from aidp.fold import Fold, FoldKey, reread
from aidp.model import Record
from aidp.store.fill import changed, read_span


class LogFile:
    """The log's descriptor, closed when the last reader of it is gone."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __del__(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass

    def record(self, rid: str, off: int, size: int) -> Record:
        return self.decode(rid, read_span(self.fd, off, off + size))

    @staticmethod
    def decode(rid: str, raw: bytes) -> Record:
        found = reread(raw)
        if found is None or found.get("id") != rid:
            raise changed()
        return found


class Handle:
    """The fold's connection, closed when the last of its mappings is gone (a
    connection sits in a reference cycle of its own: left to the collector, it would
    hold its read transaction, and every writer would wait for it)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __del__(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass


class StoreTasks(Mapping[str, Record]):
    """id -> winning task record, in the fold's order (the line each id first came on)."""

    def __init__(self, handle: Handle, log: LogFile) -> None:
        self.handle, self.conn, self.log = handle, handle.conn, log

    def __getitem__(self, rid: str) -> Record:
        if type(rid) is not str:
            raise KeyError(rid)
        row = self.conn.execute("SELECT off, len FROM task WHERE id = ?", (rid,)).fetchone()
        if row is None:
            raise KeyError(rid)
        return self.record(rid, row[0], row[1])

    def record(self, rid: str, off: int, size: int) -> Record:
        """The task a row stands for: its line in the log, or (`off` -1: a task two
        clones changed concurrently) its record folded field by field (fill._merge)."""
        if off >= 0:
            return self.log.record(rid, off, size)
        found = self.conn.execute("SELECT record FROM merged WHERE id = ?", (rid,)).fetchone()
        if found is None:
            raise changed()
        return orjson.loads(found[0])  # type: ignore[no-any-return]

    def __contains__(self, rid: object) -> bool:
        return type(rid) is str and self.conn.execute(
            "SELECT 1 FROM task WHERE id = ?", (rid,)).fetchone() is not None

    def __iter__(self) -> Iterator[str]:
        return (row[0] for row in self.conn.execute("SELECT id FROM task ORDER BY seq"))

    def __len__(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM task").fetchone()[0])

    def values(self) -> Any:  # a list, in the fold's order
        return self.where("")

    def items(self) -> Any:
        return [(t["id"], t) for t in self.where("")]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]

    def where(self, condition: str, params: Sequence[Any] = (), order: str = "seq",
              limit: int = -1) -> list[Record]:
        """The tasks whose row meets `condition` (SQL), in `order`, at most `limit`."""
        record = self.record
        sql = f"SELECT id, off, len FROM task {condition} ORDER BY {order} LIMIT {int(limit)}"
        return [record(rid, off, size) for rid, off, size in self.conn.execute(sql, params)]

    def newest_first(self, batch: int = 2000) -> Iterator[list[Record]]:
        """Every task in `tasks list`'s default order (newest created first; equal stamps:
        later in the fold first), a batch at a time, none of them kept."""
        record = self.record
        rows = self.conn.execute("SELECT id, off, len FROM task ORDER BY created DESC, "
                                 "seq DESC")
        while found := rows.fetchmany(batch):
            yield [record(rid, off, size) for rid, off, size in found]

    def ids_with_prefix(self, prefix: str, *, last_part: bool) -> list[str]:
        """The ids (sorted) that start with `prefix`, or whose last `_` part does."""
        column = "hex" if last_part else "id"
        sql = f"SELECT id FROM task WHERE {column} >= ? AND {column} < ? ORDER BY id"
        return [row[0] for row in self.conn.execute(sql, (prefix, prefix + "\U0010ffff"))]

    def ids_with_prefixes(self, prefixes: set[str], *, last_part: bool
                          ) -> dict[str, list[str]]:
        return {p: self.ids_with_prefix(p, last_part=last_part) for p in prefixes}


class StoreFold(Fold):
    """A fold answered by the store. Its typed records (work queue, TODO lists) and fold
    keys are read from it on first use: commands that never look at them do not."""

    def __init__(self, conn: sqlite3.Connection, log: LogFile, **fields: Any) -> None:
        handle = Handle(conn)
        self.rows = StoreTasks(handle, log)  # fold.tasks, typed as what it is
        super().__init__(tasks=self.rows, **fields)  # type: ignore[arg-type]
        del self.typed, self.typed_keys, self.task_keys  # see __getattr__
        self._handle, self.db, self._log = handle, conn, log

    def __getattr__(self, name: str) -> Any:
        # Called only while these are not set yet.
        if name == "task_keys":
            self.task_keys = {rid: (ts, line) for rid, ts, line in self.db.execute(
                "SELECT id, ts, line FROM task ORDER BY seq")}
        elif name in ("typed", "typed_keys"):
            typed: dict[str, Record] = {}
            keys: dict[str, FoldKey] = {}
            for rid, ts, line, body in self.db.execute(
                    "SELECT id, ts, line, body FROM typed ORDER BY seq"):
                typed[rid], keys[rid] = self._log.decode(rid, body), (ts, line)
            self.typed, self.typed_keys = typed, keys
        else:
            raise AttributeError(name)
        return self.__dict__[name]
