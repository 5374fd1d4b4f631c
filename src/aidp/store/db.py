"""The store's database file, `.aidp/cache/store.db`: opening it safely, its schema,
whether it may be trusted at all (docs/store.md, "The read path": its own device
and inode, this format; no links, no fifos; waits bounded by BUSY_SECONDS), and a
fold's connection to it (`Handle`)."""

from __future__ import annotations

import atexit
import contextlib
import os
import sqlite3
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aidp.tasklist import files
from aidp.tasklist.stamp import STAMP_NAME

if TYPE_CHECKING:
    from pathlib import Path

NAME = "store.db"
# Bumped when the schema or a column's meaning changes (older files are rebuilt).
FORMAT = 16
SIDECARS = ("-wal", "-shm", "-journal")  # files SQLite keeps next to the database
BUSY_SECONDS = 0.2

# The tables and their columns: docs/store.md, "The store's tables".
SCHEMA = """
CREATE TABLE meta(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
CREATE TABLE task(seq INTEGER PRIMARY KEY, id TEXT NOT NULL, hex TEXT NOT NULL,
  ts INTEGER NOT NULL, line INTEGER NOT NULL, off INTEGER NOT NULL, len INTEGER NOT NULL,
  partial INTEGER NOT NULL, status TEXT, priority TEXT, created INTEGER NOT NULL,
  updated INTEGER NOT NULL, finished INTEGER NOT NULL, session TEXT, body BLOB, shown BLOB);
CREATE TABLE tag(seq INTEGER NOT NULL, tag TEXT NOT NULL, status TEXT, priority TEXT,
  PRIMARY KEY(seq, tag)) WITHOUT ROWID;
CREATE TABLE typed(seq INTEGER PRIMARY KEY, id TEXT NOT NULL, ts INTEGER NOT NULL,
  line INTEGER NOT NULL, off INTEGER NOT NULL, len INTEGER NOT NULL, body BLOB NOT NULL,
  task TEXT, blocked_by TEXT, parent TEXT, kind TEXT, removed INTEGER NOT NULL,
  task_type TEXT);
CREATE TABLE merged(id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID;
"""
# Created after a cold build's rows are in (faster than keeping them up to date); what
# each covers: docs/store.md, "The read path". With them the trigger that takes
# a replaced task row's tags with it (a cold build replaces none: it has no trigger).
# typed_kind finds the rows of a few kinds (a TODO list's) among many; SQLite has no
# statistics, so a query that finds typed rows by task or link writes `+kind` (else it
# may walk every row of that kind for each task instead).
INDEXES = """
CREATE UNIQUE INDEX IF NOT EXISTS task_id ON task(id);
CREATE INDEX task_status ON task(status, seq, id, priority, created, off, len);
CREATE INDEX task_created ON task(status, created, seq, id, off, len, body, shown);
CREATE INDEX task_age ON task(status, created);
CREATE INDEX task_finished ON task(status, finished);
CREATE INDEX task_filed ON task(created);
CREATE INDEX task_hex ON task(hex);
CREATE INDEX task_rank ON task(status, (CASE priority WHEN 'high' THEN 0 WHEN 'low' THEN 2
  ELSE 1 END), created, seq, id, priority);
CREATE INDEX tag_status ON tag(status, tag, priority);
CREATE INDEX tag_tag ON tag(tag);
CREATE UNIQUE INDEX typed_id ON typed(id);
CREATE INDEX typed_task ON typed(task);
CREATE INDEX typed_links ON typed(blocked_by, task);
CREATE INDEX typed_parent ON typed(parent, task);
CREATE INDEX typed_type ON typed(task, seq, task_type) WHERE kind = 'task_type';
CREATE INDEX typed_kind ON typed(kind);
CREATE TRIGGER task_tags AFTER DELETE ON task BEGIN DELETE FROM tag WHERE seq = OLD.seq; END;
"""
# The tallies (`stats`): counted once after the cold build, then kept by triggers. The
# fill replaces rows (INSERT OR REPLACE: a delete, then an insert), whose delete fires
# triggers only with recursive_triggers on (connect). A count down to 0 stays as a row;
# the questions leave such rows out.
def _tally(tally: str, table: str, key: str) -> str:
    match = f"status IS NEW.status AND {key} IS NEW.{key}"
    return f"""
CREATE TABLE {tally}(status TEXT, {key} TEXT, n INTEGER NOT NULL);
CREATE INDEX {tally}_key ON {tally}(status, {key});
INSERT INTO {tally} SELECT status, {key}, count(*) FROM {table} GROUP BY 1, 2;
CREATE TRIGGER {table}_in AFTER INSERT ON {table} BEGIN
  INSERT INTO {tally} SELECT NEW.status, NEW.{key}, 0 WHERE NOT EXISTS (
    SELECT 1 FROM {tally} WHERE {match});
  UPDATE {tally} SET n = n + 1 WHERE {match};
END;
CREATE TRIGGER {table}_out AFTER DELETE ON {table} BEGIN
  UPDATE {tally} SET n = n - 1 WHERE {match.replace("NEW.", "OLD.")};
END;"""


TALLIES = _tally("tally", "task", "priority") + _tally("tag_tally", "tag", "tag")
META_KEYS = ("format", "dev", "ino", "nonce", "offset", "crc", "lines", "damaged")


class Unusable(Exception):
    """The database file is not one this process may trust: remove it and build anew."""


def _family(path: Path) -> list[Path]:
    """The database and the files SQLite keeps next to it."""
    return [path.with_name(path.name + s) for s in ("", *SIDECARS)]


def clear_strays(path: Path) -> bool:
    """Whatever is at the database's (and the stamp's) paths and is not a regular file
    (a link, a fifo) removed; whether every path is now absent or regular."""
    return files.remove_irregular([*_family(path), path.with_name(STAMP_NAME)])


def remove(path: Path) -> None:
    """The database and its sidecars gone (a stale -wal must never meet a new file)."""
    for name in _family(path):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


def connect(path: Path) -> sqlite3.Connection:
    """A connection to an existing file (never creating one), in autocommit mode:
    transactions are begun and ended explicitly. No fsync (a derived cache; a process
    killed mid-transaction leaves a journal SQLite rolls back). No memory map: at 1M
    events its pages count in the process (tasks list --status pending --json peaked at
    184 MB mapped against 106 MB read), and a file cut short under it by anything but
    SQLite would end the process with SIGBUS instead of an error."""
    name = str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    conn = sqlite3.connect(f"file:{name}?mode=rw", uri=True, timeout=BUSY_SECONDS,
                           isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA trusted_schema=OFF")
    conn.execute("PRAGMA recursive_triggers=ON")  # a REPLACE fires the delete triggers
    conn.execute("PRAGMA synchronous=OFF")
    return conn


def read_meta(conn: sqlite3.Connection, st: os.stat_result) -> dict[str, Any]:
    """The meta row of the database, which must be the file `st` describes as its
    writer made it (not a copy, nor a file planted in a clone), or Unusable."""
    try:
        meta = dict(conn.execute("SELECT k, v FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        if locked(exc):
            raise
        raise Unusable(str(exc)) from exc
    if set(META_KEYS) - meta.keys() or meta["format"] != FORMAT:
        raise Unusable("another format")
    if not all(type(meta[k]) is int for k in META_KEYS if k != "nonce"):
        raise Unusable("bad meta")
    if (meta["dev"], meta["ino"]) != (st.st_dev, st.st_ino):
        raise Unusable("copied or planted")  # not the file its writer made
    return meta


def locked(exc: BaseException) -> bool:
    """Whether `exc` is SQLite saying another process holds the database."""
    text = str(exc)
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def write_meta(conn: sqlite3.Connection, values: dict[str, Any]) -> None:
    conn.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", values.items())


def create(path: Path) -> tuple[sqlite3.Connection, int]:
    """A new, empty database at `path` (which must not exist) and a descriptor of it, set
    up for a bulk fill: no journal until the fill is committed (a crash leaves a file
    Unusable, not wrong). SQLite opens the file by its name, and would follow a link
    swapped in at the path meanwhile: no SQL runs before the file it opened is checked
    to be the one created here."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | files.NOFOLLOW, 0o644)
    try:
        st = os.fstat(fd)
        before = files.descriptors_of(st)
        conn = connect(path)
        if not files.descriptors_of(st) - before:
            conn.close()
            raise Unusable("SQLite opened another file than the one created")
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA cache_size=-16000")
        conn.executescript(SCHEMA)
        write_meta(conn, {"format": 0, "dev": st.st_dev, "ino": st.st_ino})  # not yet
    except BaseException:
        os.close(fd)
        raise
    return conn, fd


def finish_create(conn: sqlite3.Connection) -> None:
    """Index the filled tables, mark the file complete, and switch to the rollback
    journal every later transaction uses (readers then never change the file: its
    stat data tells any other change apart, see aidp.tasklist.stamp)."""
    conn.executescript(INDEXES)
    conn.executescript(TALLIES)
    write_meta(conn, {"format": FORMAT})  # last: a file cut short before is Unusable
    conn.execute("PRAGMA journal_mode=DELETE")


class Handle:
    """The fold's connection, closed when the last of its mappings is gone (a
    connection sits in a reference cycle of its own: left to the collector, it would
    hold its read transaction, and every writer would wait for it), or at the latest
    when the process exits (a fold kept to the end, or frozen: TaskLog.freeze; the
    worktrees overlay's write transaction left open at exit would leave a hot journal,
    which the next reader rolls back into the file, changing its stat data: the store
    would be taken for changed and rebuilt); then `release` (the loader's
    aidp.tasklist.lock.Lease: no descriptor of the file is closed before the connection, which
    would drop its locks)."""

    def __init__(self, conn: sqlite3.Connection,
                 release: Callable[[], None] | None = None) -> None:
        self.conn, self.release = conn, release
        _LIVE.add(self)

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            return  # still open: its descriptor stays too
        release, self.release = self.release, None
        if release is not None:
            release()  # once

    def to_memory(self) -> None:
        """Keep what the connection sees (its write transaction's changes too: the
        worktrees overlay's) in memory, and let the file go: its transaction rolled
        back, so the file's write lock is free for another connection of this process
        (aidp.store.overlay.load_shared), then `release`. A page copy of the file, no
        fold; the handle answers as before, from a connection to that copy. Never the
        same connection deserialized: a cursor still open on it (a loop over a fold's
        tasks left early) would crash the process once used or collected (SQLite
        3.40, CPython 3.11: SIGSEGV); on the file's connection, closed, it only fails."""
        if not self.conn.in_transaction:
            return  # (closed, or in memory already: holds no lock)
        copy = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        copy.deserialize(self.conn.serialize())
        old, self.conn = self.conn, copy
        old.execute("ROLLBACK")
        old.close()
        release, self.release = self.release, None
        if release is not None:
            release()

    __del__ = close


_LIVE: weakref.WeakSet[Handle] = weakref.WeakSet()  # every Handle not yet collected


@atexit.register
def _close_all() -> None:
    for handle in list(_LIVE):
        handle.close()
