"""The store's database file, `.aidp/cache/store.db`: opening it safely, its schema, and
whether it may be trusted at all (docs/architecture.md, "The read path": its own device
and inode, this format; no links, no fifos; waits bounded by BUSY_SECONDS)."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import stat
from typing import TYPE_CHECKING, Any

from aidp import files
from aidp.files import NOFOLLOW
from aidp.stamp import CACHE_DIR, STAMP_NAME

if TYPE_CHECKING:
    from pathlib import Path

NAME = "store.db"
# Bumped when the schema or a column's meaning changes (older files are rebuilt); 10:
# typed records' type and removed, the ready rank index; 11: open tasks' records.
FORMAT = 11
SIDECARS = ("-wal", "-shm", "-journal")  # files SQLite keeps next to the database
BUSY_SECONDS = 0.2

# The tables and their columns: docs/architecture.md, "The store's tables". Text columns
# are NULL where the record's value is not a string; stamps are µs (UNKNOWN_TS when
# unreadable).
SCHEMA = """
CREATE TABLE meta(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
CREATE TABLE task(seq INTEGER PRIMARY KEY, id TEXT NOT NULL, hex TEXT NOT NULL,
  ts INTEGER NOT NULL, line INTEGER NOT NULL, off INTEGER NOT NULL, len INTEGER NOT NULL,
  status TEXT, priority TEXT, created INTEGER NOT NULL, updated INTEGER NOT NULL,
  finished INTEGER NOT NULL, session TEXT, body BLOB);
CREATE TABLE tag(seq INTEGER NOT NULL, tag TEXT NOT NULL, status TEXT, priority TEXT,
  PRIMARY KEY(seq, tag)) WITHOUT ROWID;
CREATE TABLE typed(seq INTEGER PRIMARY KEY, id TEXT NOT NULL, ts INTEGER NOT NULL,
  line INTEGER NOT NULL, off INTEGER NOT NULL, len INTEGER NOT NULL, body BLOB NOT NULL,
  task TEXT, blocked_by TEXT, parent TEXT, kind TEXT, removed INTEGER NOT NULL);
CREATE TABLE partial(id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE merged(id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID;
"""
# Created after a cold build's rows are in (faster than keeping them up to date). Each
# covers what its questions read: the tasks of a status in the fold's order (list,
# prime), counts and ages per status (stats), the weeks' series, short ids, tags per
# status, the pending tasks best first (ready: walked in rank order to the limit).
INDEXES = """
CREATE UNIQUE INDEX IF NOT EXISTS task_id ON task(id);
CREATE INDEX task_status ON task(status, seq, id, priority, created, off, len);
CREATE INDEX task_created ON task(status, created);
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
"""
# The tallies: how many tasks have each (status, priority), and how many tasks of each
# status carry each tag, kept by triggers in every transaction after the cold build
# (which counts them once, below), so `stats` reads a few rows instead of scanning
# every task. The fill replaces a row (INSERT OR REPLACE: a delete, then an insert):
# the delete's trigger fires only with recursive_triggers on, which connect() sets.
# A count down to 0 stays as a row; the questions leave such rows out.
TALLIES = """
CREATE TABLE tally(status TEXT, priority TEXT, n INTEGER NOT NULL);
CREATE INDEX tally_key ON tally(status, priority);
INSERT INTO tally SELECT status, priority, count(*) FROM task GROUP BY 1, 2;
CREATE TABLE tag_tally(status TEXT, tag TEXT NOT NULL, n INTEGER NOT NULL);
CREATE INDEX tag_tally_key ON tag_tally(status, tag);
INSERT INTO tag_tally SELECT status, tag, count(*) FROM tag GROUP BY 1, 2;
CREATE TRIGGER task_in AFTER INSERT ON task BEGIN
  INSERT INTO tally SELECT NEW.status, NEW.priority, 0 WHERE NOT EXISTS (
    SELECT 1 FROM tally WHERE status IS NEW.status AND priority IS NEW.priority);
  UPDATE tally SET n = n + 1 WHERE status IS NEW.status AND priority IS NEW.priority;
END;
CREATE TRIGGER task_out AFTER DELETE ON task BEGIN
  UPDATE tally SET n = n - 1 WHERE status IS OLD.status AND priority IS OLD.priority;
END;
CREATE TRIGGER tag_in AFTER INSERT ON tag BEGIN
  INSERT INTO tag_tally SELECT NEW.status, NEW.tag, 0 WHERE NOT EXISTS (
    SELECT 1 FROM tag_tally WHERE status IS NEW.status AND tag = NEW.tag);
  UPDATE tag_tally SET n = n + 1 WHERE status IS NEW.status AND tag = NEW.tag;
END;
CREATE TRIGGER tag_out AFTER DELETE ON tag BEGIN
  UPDATE tag_tally SET n = n - 1 WHERE status IS OLD.status AND tag = OLD.tag;
END;
"""
META_KEYS = ("format", "dev", "ino", "nonce", "offset", "crc", "lines", "damaged")


class Unusable(Exception):
    """The database file is not one this process may trust: remove it and build anew."""


def folder(log_dir: Path, *, create: bool) -> Path | None:
    """`.aidp/cache`, a real folder (created when `create`), or None: no cache here.
    Through a linked `.aidp` there is none: the link may be a cloned repository's
    (`.aidp -> ../other/.aidp`), and a read must not write into the folder it names;
    such a tasklist is folded plainly (docs/security.md)."""
    path = log_dir / CACHE_DIR
    try:
        if stat.S_ISLNK(os.lstat(log_dir).st_mode):
            return None
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            return None
        try:
            os.mkdir(path)
        except OSError:
            return None
        files.create_quietly(path / ".gitignore", b"*\n")  # derived state only: git ignores it
        return path
    except OSError:
        return None
    return path if stat.S_ISDIR(st.st_mode) else None  # a link or a file: no cache


def clear_strays(path: Path) -> bool:
    """Whatever is at the database's (and the stamp's) paths and is not a regular file
    (a link, a fifo) removed; whether every path is now absent or regular."""
    return files.remove_irregular(path.with_name(name) for name in (
        path.name, *(path.name + s for s in SIDECARS), STAMP_NAME))


def sweep(folder: Path) -> None:
    """The half-built databases of killed builders removed (an hour old: a live builder
    is done long before)."""
    files.remove_older(folder, NAME + ".", ".tmp", 3600)


def at_path(path: Path, fd: int) -> bool:
    """Whether `fd` is the file at `path` (not one removed or replaced since)."""
    try:
        st, here = os.fstat(fd), os.lstat(path)
    except FileNotFoundError:
        return False
    return (st.st_dev, st.st_ino) == (here.st_dev, here.st_ino)


def remove(path: Path) -> None:
    """The database and its sidecars gone (a stale -wal must never meet a new file)."""
    for name in (path.name, *(path.name + s for s in SIDECARS)):
        try:
            os.unlink(path.with_name(name))
        except FileNotFoundError:
            pass


class Lease:
    """A descriptor of the database held for this process's connections to it. SQLite
    locks with POSIX `fcntl` locks, which the kernel drops for the whole process when
    ANY descriptor of the file is closed: a descriptor of ours (for the flock, fstat,
    utime) closed while a connection of this process reads or writes the file would
    let another process write under that read or transaction (a torn view; dirty
    pages of ours over theirs). So a lease's descriptor is closed only once no lease
    on the same file is held in this process (as SQLite does with its own); until
    then it waits, idle, and the next lease on that file reuses it."""

    def __init__(self, fd: int) -> None:
        self.fd, self.ended = fd, False
        st = os.fstat(fd)
        self.key = (st.st_dev, st.st_ino)
        _HELD[self.key] = _HELD.get(self.key, 0) + 1

    def end(self) -> None:
        """Given back (once; later calls do nothing): closed, with every idle one of its
        file, if no other lease of it is held."""
        if self.ended:
            return
        self.ended = True
        fcntl.flock(self.fd, fcntl.LOCK_UN)  # idle: free for the next lease
        idle = _IDLE.setdefault(self.key, [])
        idle.append(self.fd)
        _HELD[self.key] -= 1
        if _HELD[self.key] == 0:
            del _HELD[self.key], _IDLE[self.key]
            for fd in idle:
                os.close(fd)


_HELD: dict[tuple[int, int], int] = {}  # (dev, ino) -> leases held
_IDLE: dict[tuple[int, int], list[int]] = {}  # descriptors given back, not yet closed


def lease(path: Path) -> Lease:
    """A lease on the database at `path` (FileNotFoundError: none there), an idle
    descriptor of the same file reused (its flock free: given back unlocked)."""
    st = os.lstat(path)
    idle = _IDLE.get((st.st_dev, st.st_ino))
    if idle and stat.S_ISREG(st.st_mode):
        return Lease(idle.pop())
    return Lease(os.open(path, os.O_RDONLY | os.O_NONBLOCK | NOFOLLOW))


def connect(path: Path) -> sqlite3.Connection:
    """A connection to an existing file (never creating one), in autocommit mode:
    transactions are begun and ended explicitly."""
    name = str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    conn = sqlite3.connect(f"file:{name}?mode=rw", uri=True, timeout=BUSY_SECONDS,
                           isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA trusted_schema=OFF")
    conn.execute("PRAGMA recursive_triggers=ON")  # a REPLACE's delete keeps the tallies
    return conn


def read_meta(conn: sqlite3.Connection, st: os.stat_result) -> dict[str, Any]:
    """The meta row of the database, which must be the file `st` describes as its
    writer made it (not a copy, nor a file planted in a clone), or Unusable."""
    try:
        meta = dict(conn.execute("SELECT k, v FROM meta").fetchall())
    except sqlite3.OperationalError as exc:
        if locked(exc):
            raise
        raise Unusable(str(exc)) from exc
    except sqlite3.DatabaseError as exc:
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
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc)
    return "locked" in text or "busy" in text


def write_meta(conn: sqlite3.Connection, values: dict[str, Any]) -> None:
    conn.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", values.items())


def create(path: Path) -> tuple[sqlite3.Connection, int]:
    """A new, empty database at `path` (which must not exist) and a descriptor of it, set
    up for a bulk fill: no journal until the fill is committed (a crash leaves a file
    Unusable, not wrong). SQLite opens the file by its name, and would follow a link
    swapped in at the path meanwhile: no SQL runs before the file it opened is checked
    to be the one created here."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644)
    try:
        conn = _opened(path, os.fstat(fd))
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("PRAGMA cache_size=-16000")
        conn.executescript(SCHEMA)
        st = os.fstat(fd)
        write_meta(conn, {"format": 0, "dev": st.st_dev, "ino": st.st_ino})  # not yet
    except BaseException:
        os.close(fd)
        raise
    return conn, fd


def _opened(path: Path, st: os.stat_result) -> sqlite3.Connection:
    """connect(path), whose file (the descriptor SQLite opened) is the file `st` is of."""
    def ours() -> set[str]:  # this process's descriptors of that file
        found = set()
        for name in os.listdir(fds):
            try:
                if os.path.samestat(os.fstat(int(name)), st):
                    found.add(name)
            except OSError:
                pass  # (the listing's own descriptor, closed)
        return found

    fds = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    before = ours()
    conn = connect(path)
    if ours() - before:
        return conn
    conn.close()
    raise Unusable("SQLite opened another file than the one created")


def finish_create(conn: sqlite3.Connection) -> None:
    """Index the filled tables, mark the file complete, and switch to the rollback
    journal every later transaction uses (readers then never change the file: its
    stat data tells any other change apart, see aidp.stamp)."""
    conn.executescript(INDEXES)
    conn.executescript(TALLIES)
    write_meta(conn, {"format": FORMAT})  # last: a file cut short before is Unusable
    conn.execute("PRAGMA journal_mode=DELETE")


def tune(conn: sqlite3.Connection) -> None:
    """Settings of every use after the build: no fsync (a derived cache; a process
    killed mid-transaction leaves a journal SQLite rolls back). No memory map: at 1M
    events its pages count in the process (tasks list --status pending --json peaked at
    184 MB mapped against 106 MB read, the same time), and a file cut short under it by
    anything but SQLite would end the process with SIGBUS instead of an error."""
    conn.execute("PRAGMA synchronous=OFF")
