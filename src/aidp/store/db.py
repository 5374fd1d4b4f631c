"""The store's database file, `.aidp/cache/store.db`: opening it safely, its schema, and
whether it may be trusted at all.

The cache folder is git-ignored, but a repository can force-add files there, and a
person can copy one from another checkout: a database is used only if it records its
own device and inode (a copy or a planted file has others), has this format, and
opens as SQLite. Nothing in the folder is followed through a symbolic link or opened
when it is not a regular file (a fifo would hang the read): such entries are removed
(the folder is aidp's own), a linked folder means no cache at all. The connection
waits at most BUSY_SECONDS for a lock another process holds, then gives up.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from typing import TYPE_CHECKING, Any

from aidp.files import NOFOLLOW
from aidp.stamp import CACHE_DIR, STAMP_NAME

if TYPE_CHECKING:
    from pathlib import Path

NAME = "store.db"
FORMAT = 11  # bump when the schema or a column's meaning changes: older files are rebuilt
# (2: field-level merge: the partial table, meta fielded and pending; 3: session;
# 4: tags carry the status, covering indexes; 5: merged rows; 6: typed records' lines;
# 7: the tallies; 8: typed records' task, blocked_by and parent; 9: tags carry the
# priority; 10: typed records' type and removed, the ready rank index; 11: open tasks'
# records)
SIDECARS = ("-wal", "-shm", "-journal")  # files SQLite keeps next to the database
BUSY_SECONDS = 0.2

# Tasks and typed records as rows: `seq` is the line an id first appeared on (the
# fold's order), (ts, line) the winning record's fold key, (off, len) where its line is
# in the log. Status and priority are NULL when not a string (as the fold's readers
# count them); stamps are µs, UNKNOWN_TS when unreadable; `hex` is the id's last `_`
# part (short ids); `finished` is model.finished_at; `session` the task's session (a
# string, else NULL); `body` an open task's record (orjson), NULL for a closed one: the
# open tasks are the ones listed most, decoded in one go instead of a read each. Tags:
# task_tags, one row each, with the task's status and priority (counted per status, and
# a tag filter narrowed by status and priority, without a look-up of the task). Typed
# records keep their line (`body`): the work queue reads them all, one query instead of
# a read per record; and their
# `task`, `blocked_by`, `parent` and `kind` (the type; each a string, else NULL) and
# `removed` (1: the key is true), so the records about one task (queue.state(about=…),
# `tasks show`) are found by index, and `ready` is one query, none decoded.
# `partial`: the tasks whose winning line came with a task_fields record (fill.py);
# meta `fielded` (the log holds task_fields records) and `pending` (those still
# waiting for their task line, JSON) are written with each fill. `merged`: a task two
# clones changed concurrently, folded field by field (fields.merge_task) as JSON: its
# row has `off` -1 and is read from here instead of the log.
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
# Created after a cold build's rows are in (faster than keeping them up to date); task_id
# sooner when the log has task_fields records (the fill then looks winners up by id). Each
# covers what its questions read, so they need no look-up of the row: the tasks of a
# status in the fold's order (list, ready, prime), counts and ages per status (stats),
# the weeks' series (since a week), short ids, tags per status, the pending tasks best
# first (ready: walked in rank order, stopping at the limit).
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
        _ignore_all(path)
        return path
    except OSError:
        return None
    return path if stat.S_ISDIR(st.st_mode) else None  # a link or a file: no cache


def _ignore_all(path: Path) -> None:
    """cache/ holds derived state only: git ignores it even without .aidp/.gitignore."""
    try:
        fd = os.open(path / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW,
                     0o644)
    except OSError:
        return
    try:
        os.write(fd, b"*\n")
    except OSError:
        pass
    finally:
        os.close(fd)


def clear_strays(path: Path) -> bool:
    """Remove whatever is at the database's (and the stamp's) paths and is not a regular
    file (a link, a fifo); whether every path is now absent or regular."""
    for name in (path.name, *(path.name + s for s in SIDECARS), STAMP_NAME):
        entry = path.with_name(name)
        try:
            mode = os.lstat(entry).st_mode
        except FileNotFoundError:
            continue
        except OSError:
            return False
        if stat.S_ISREG(mode):
            continue
        try:
            os.unlink(entry)
        except OSError:
            return False
    return True


def sweep(folder: Path, older_than: float = 3600) -> None:
    """Remove the half-built databases of killed builders (an hour old: a live builder
    is done long before)."""
    import time

    prefix = NAME + "."
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(prefix)
                   and e.name.endswith(".tmp")]
        for entry in entries:
            if entry.stat(follow_symlinks=False).st_mtime < time.time() - older_than:
                os.unlink(entry.path)
    except OSError:
        pass


def remove(path: Path) -> None:
    """The database and its sidecars gone (a stale -wal must never meet a new file)."""
    for name in (path.name, *(path.name + s for s in SIDECARS)):
        try:
            os.unlink(path.with_name(name))
        except FileNotFoundError:
            pass


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


def create(path: Path) -> sqlite3.Connection:
    """A new, empty database at `path` (which must not exist), set up for a bulk fill:
    no journal until the fill is committed (a crash leaves a file Unusable, not wrong)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644)
    os.close(fd)
    conn = connect(path)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA cache_size=-16000")
    conn.executescript(SCHEMA)
    st = os.stat(path)
    write_meta(conn, {"format": 0, "dev": st.st_dev, "ino": st.st_ino})  # format: not yet
    return conn


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
    killed mid-transaction leaves a journal SQLite rolls back)."""
    conn.execute("PRAGMA synchronous=OFF")
