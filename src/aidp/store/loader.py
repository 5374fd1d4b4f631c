"""`load`: the folded state of a log, from the store brought up to date with it; when
it may be trusted and how it is kept exact: docs/store.md, "The read path".
Any doubt (a lock held too long, not a database, an unwritable folder): a plain fold.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from aidp.store import db
from aidp.store.questions import StoreFold
from aidp.tasklist import files
from aidp.tasklist.files import is_at
from aidp.tasklist.fold import DAMAGED, no_gc, read_line
from aidp.tasklist.line import LogFile, crc_of, last_line_end, torn_tail
from aidp.tasklist.lock import flock_within, lease, trade, turn
from aidp.tasklist.stamp import (
    NO_KEY,
    cache_folder,
    read_stamp,
    stat_key,
    vouch,
    vouched_key,
    write_stamp,
)

if TYPE_CHECKING:
    from pathlib import Path

    from aidp.tasklist.fold import Fold
    from aidp.tasklist.log import TaskLog
    from aidp.tasklist.stamp import StatKey

MIN_BYTES = 32 * 1024  # below this size a plain fold costs less than the store
RACY_NS = 2_000_000_000  # stat data younger than this may hide a same-tick change
STRICT = False  # tests: a bug in the store fails them, never falls back silently
BUILDS_ENV = "AIDP_STORE_BUILDS"  # tests: a file each build adds a line to (its reason)
# Missing stores of logs of these sizes are left to the caller's builder, the read folding
# plainly (docs/store.md, "When the store is built", for why these sizes).
BACKGROUND_MIN, PLAIN_MAX = 1 << 20, 32 << 20
BUILD_RATE = 2_000_000  # bytes/s, a fifth of a build's here: the longest wait for one
TURN = "build.lock"  # in the cache folder: its flock is the turn of the one build at a time


class _Retry(Exception):
    """The store or the log changed under this read (moved on elsewhere, built here)."""


# (the log, the turn it inherits, why it builds): starts a detached builder (aidp.store.build)
Builder = Callable[["TaskLog", int, str], None]


def load(log: TaskLog, *, whole_lines: bool = False, builder: Builder | None = None) -> Fold:
    """The folded state of `log`, the same as `log.full_fold(whole_lines=…)`.
    `whole_lines`: leave out a last line without its newline (a write in progress)."""
    found = attempt(log, whole_lines=whole_lines, builder=builder)
    return log.full_fold(whole_lines=whole_lines) if found is None else found


# (connection in no transaction, meta, the fold, the log's fd) -> whether it answers
Overlay = Callable[[sqlite3.Connection, dict[str, Any], StoreFold, int], bool]


def attempt(log: TaskLog, *, whole_lines: bool = False, overlay: Overlay | None = None,
            builder: Builder | None = None, held: tuple[int, str] | None = None
            ) -> Fold | None:
    """`load`, or None where it would fold plainly. `overlay` is given the store's fold
    before it is returned (aidp.store.overlay: other worktrees' lines on top); `builder`,
    and `held` (the turn a detached builder has, why it builds): see _Load._build."""
    try:
        fd = os.open(log.path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None  # missing: empty; else its error
    file = LogFile(fd)  # closed when the last task read from it is
    for _attempt in range(4):
        st = os.fstat(fd)  # again on a retry: the log may have grown meanwhile
        if st.st_size < max(MIN_BYTES, 1) or not stat.S_ISREG(st.st_mode):
            return None
        try:
            found = _Load(log, file, st, overlay, builder, held).run(whole_lines)
        except _Retry:
            continue
        except (sqlite3.Error, OSError, db.Unusable) as exc:
            if STRICT and not db.locked(exc):
                raise
            break
        if found is None:
            break
        return found
    return None


class _Load:
    def __init__(self, log: TaskLog, file: LogFile, st: os.stat_result,
                 overlay: Overlay | None = None, builder: Builder | None = None,
                 held: tuple[int, str] | None = None) -> None:
        self.log, self.file, self.st, self.fd = log, file, st, file.fd
        self.overlay, self.builder = overlay, builder
        self.held: int | None = held[0] if held else None  # the turn, had already
        self.why = held[1] if held else "missing"  # why it is (re)built, for BUILDS_ENV
        self.trusted = False  # the prefix was trusted on vouched stat data

    def run(self, whole_lines: bool) -> Fold | None:
        """The fold, or None: answer with a plain fold instead."""
        folder = cache_folder(self.log.dir, create=True)
        if folder is None:
            return None
        path = folder / db.NAME
        end = last_line_end(self.fd, self.st.st_size)
        if end == 0 or not db.clear_strays(path):
            return None
        torn = b"" if whole_lines else torn_tail(self.fd, end, self.st.st_size)
        try:
            self.lease = lease(path)
        except FileNotFoundError:
            return self._build(path, end)
        dbfd, kept = self.lease.fd, False
        try:
            if not flock_within(dbfd, fcntl.LOCK_SH, db.BUSY_SECONDS):
                return None  # a writer of the store holds it
            checked = self._checked(path, dbfd)
            if checked is None:  # removed only by a holder of its flock alone (SQLite's
                # journal is named after the path: never unlink a file in use, nor the
                # journal of whatever is at the path by then)
                if not trade(dbfd, fcntl.LOCK_EX, db.BUSY_SECONDS):
                    return None
                if not is_at(path, dbfd):
                    raise _Retry  # rebuilt meanwhile: check that one
                db.remove(path)
                return self._build(path, end)
            conn, meta = checked
            try:
                if meta["offset"] != end:
                    conn.execute("ROLLBACK")  # (the read transaction _checked began)
                    if not trade(dbfd, fcntl.LOCK_EX, db.BUSY_SECONDS):
                        conn.close()
                        return None
                    self._refresh(conn, dbfd, meta, end)
                    conn.execute("BEGIN")
                    meta = db.read_meta(conn, os.fstat(dbfd))
                found = self._fold(conn, meta, torn)
                kept = found is not None
                return found
            except BaseException:
                conn.close()
                raise
        finally:
            if kept:  # the fold's connection holds the lease (tasklist.lock.Lease), not the flock
                fcntl.flock(dbfd, fcntl.LOCK_UN)
            else:
                self.lease.end()  # (ended already if a fold made here was dropped)

    def _checked(self, path: Path, dbfd: int
                 ) -> tuple[sqlite3.Connection, dict[str, Any]] | None:
        """A connection (in a read transaction) to the database and its meta, if it is
        intact and covers a prefix of this very log (no SQL runs before its stat data is
        the one its last aidp writer stamped); None: rebuild it (self.why says why)."""
        stamp = read_stamp(self.log.dir)
        if stamp is None or stamp[2] != stat_key(os.fstat(dbfd)):
            self.why = "changed"  # by something else than aidp, or its stamp is lost
            return None
        conn = db.connect(path)
        try:
            conn.execute("BEGIN")
            meta = db.read_meta(conn, os.fstat(dbfd))  # (Unusable: not a database, …)
            if stamp[0] != meta["nonce"]:
                self.why = "another store's stamp"
            elif stamp[1] == stat_key(self.st):
                self.trusted = True
                return conn, meta
            elif self._prefix_holds(meta):
                if (key := self._log_key()) != NO_KEY:
                    write_stamp(self.log.dir, meta["nonce"], key, stamp[2])
                return conn, meta
            else:
                self.why = "another file"
        except db.Unusable as exc:
            self.why = str(exc)
        except BaseException:
            conn.close()
            raise
        conn.close()
        return None

    def _prefix_holds(self, meta: dict[str, Any]) -> bool:
        """Whether the log starts with the bytes the store covers (read in full)."""
        offset = meta["offset"]
        if offset > self.st.st_size and os.fstat(self.fd).st_size >= offset:
            raise _Retry  # refreshed past this look at the log: look again
        if not 0 < offset <= self.st.st_size or os.pread(self.fd, 1, offset - 1) != b"\n":
            return False
        return bool(crc_of(self.fd, offset) == meta["crc"])

    def _refresh(self, conn: sqlite3.Connection, dbfd: int, meta: dict[str, Any],
                 end: int) -> None:
        """Fold the lines after the store's prefix into it, in one transaction."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            if db.read_meta(conn, os.fstat(dbfd))["nonce"] != meta["nonce"]:
                raise _Retry  # another process moved it on meanwhile
            nonce = self._fill(conn, meta, end)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        vouch(self.log.dir, nonce, dbfd, self._log_key())

    def _fill(self, conn: sqlite3.Connection, meta: dict[str, Any], end: int, *,
              empty: bool = False) -> bytes:
        from aidp.store import fill  # not while the store is up to date

        filler = fill.resumed(conn, meta, empty=empty)
        with no_gc(freeze=self.log.freeze):
            crc = filler.feed(self.fd, meta["offset"], end, meta["crc"])
        nonce = os.urandom(8)
        db.write_meta(conn, {**fill.state(filler, end, crc), "nonce": nonce})
        return nonce

    def _create(self, path: Path, end: int) -> NoReturn:
        """A new database of the file up to `end`, built under a name of its own, linked
        into place and locked until stamped; _Retry then checks it like any other."""
        if os.environ.get(BUILDS_ENV):
            with open(os.environ[BUILDS_ENV], "a", encoding="utf-8") as out:
                out.write(f"{os.getpid()} {self.why}\n")
        files.remove_older(path.parent, db.NAME + ".", ".tmp", 3600)  # killed builders'
        temp = path.with_name(f"{db.NAME}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            conn, fd = db.create(temp)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # nobody else knows this file yet
                try:
                    conn.execute("BEGIN")
                    nonce = self._fill(conn, {"offset": 0, "crc": 0, "lines": 0,
                                              "damaged": 0}, end, empty=True)
                    conn.execute("COMMIT")
                    db.finish_create(conn)
                finally:
                    conn.close()
                try:
                    os.link(temp, path)
                except FileExistsError:
                    raise _Retry from None
                finally:
                    os.unlink(temp)  # before the stamp: it changes the file's ctime
                vouch(self.log.dir, nonce, fd, self._log_key())
            finally:
                os.close(fd)
        finally:  # (a full disk leaves no half-built file behind)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
        raise _Retry

    def _log_key(self) -> StatKey:
        return vouched_key(self.fd, self.st, trusted=self.trusted, racy_ns=RACY_NS)

    def _build(self, path: Path, end: int) -> Fold | None:
        """The missing store built here (_Retry: check it), or not (None: fold plainly),
        by whoever has the turn (TURN): a detached builder, or a build under way, for logs
        in the background range; else this read, after waiting for one under way."""
        size = self.st.st_size
        background = self.builder is not None and BACKGROUND_MIN <= size < PLAIN_MAX
        held = self.held if self.held is not None else turn(
            path.parent, TURN, 0 if background else max(1.0, size / BUILD_RATE))
        if held is None:
            return None
        try:
            if os.path.lexists(path):
                raise _Retry  # built while this read waited for its turn
            if self.builder is None or not background:
                self._create(path, end)
            self.builder(self.log, held, self.why)  # it inherits the turn
            return None
        finally:
            if held != self.held:
                os.close(held)  # the turn ends, unless a builder inherited it

    def _fold(self, conn: sqlite3.Connection, meta: dict[str, Any], torn: bytes
              ) -> Fold | None:
        conn.execute("ROLLBACK")  # none for the fold's life: refreshes would wait
        fold = StoreFold(conn, self.file, damaged=meta["damaged"], lines=meta["lines"],
                         release=self.lease.end)
        if torn:  # a last line without its newline: damage, unless it is a record
            kind, _rid, record = read_line(torn)
            if record is not None:
                conn.close()
                return None  # it could win over a row: the plain fold answers
            fold.lines += 1
            fold.damaged += kind == DAMAGED
            fold.ends_with_newline = False
        if self.overlay is not None and (torn or not self.overlay(conn, meta, fold, self.fd)):
            conn.close()
            return None
        return fold
