"""The read cache's folder, `.aidp/cache`, and which stat data it may trust: its
`log.stamp`.

The store (aidp.store) covers a prefix of the log. It may be trusted without reading
that prefix again only when the log's stat data equals data that was *vouched for*:
recorded after the prefix was verified against the file's contents, or by an aidp
writer that appended whole lines to such a file. Anything else — another inode (even
one whose number was reused), a size, mtime or ctime of any other value — means the
prefix is checked in full before it is used.

The stamp also holds the stat data of the store's database as its last writer left
it: SQLite keeps no checksum of its pages, so a database changed by anything else (a
flipped byte, a copy over it) is told apart by its stat data, and rebuilt.
"""

from __future__ import annotations

import fcntl
import os
import stat
import struct
import time
import zlib
from typing import TYPE_CHECKING

from aidp.core.errors import StorageError
from aidp.tasklist import files
from aidp.tasklist.files import NOFOLLOW
from aidp.tasklist.lock import flock_within

if TYPE_CHECKING:
    from pathlib import Path

CACHE_DIR = "cache"  # derived, git-ignored state under .aidp/ (the store and the stamp)
STAMP_NAME = "log.stamp"

# magic, store nonce, the log's stat data, the database's stat data, crc
_STAMP = struct.Struct("<8s8sQQqqqQQqqqI")
_STAMP_MAGIC = b"aidpstm2"

StatKey = tuple[int, int, int, int, int]
NO_KEY: StatKey = (0, 0, -1, 0, 0)  # stat data nothing has (the log's, when not vouched)


def cache_folder(log_dir: Path, *, create: bool) -> Path | None:
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


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


Stamp = tuple[bytes, StatKey, StatKey]


def read_stamp(folder: Path) -> Stamp | None:
    """(store nonce, the log's vouched stat data, the database's), or None when there is
    no whole stamp."""
    try:
        fd = os.open(folder / CACHE_DIR / STAMP_NAME, os.O_RDONLY | os.O_NONBLOCK | NOFOLLOW)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None  # a fifo or a device must never be read (it could block)
        return _parse(os.pread(fd, _STAMP.size + 1, 0))
    except OSError:
        return None
    finally:
        os.close(fd)


def _parse(data: bytes) -> Stamp | None:
    if len(data) != _STAMP.size:
        return None
    magic, nonce, *keys, crc = _STAMP.unpack(data)
    if magic != _STAMP_MAGIC or zlib.crc32(data[: _STAMP.size - 4]) != crc:
        return None
    return nonce, tuple(keys[:5]), tuple(keys[5:])


def write_stamp(folder: Path, nonce: bytes, key: StatKey, db_key: StatKey, *,
                over: Stamp | None = None) -> None:
    """Record `key` as vouched for the store `nonce`, whose database has `db_key`. Best
    effort: without a stamp the next read checks or rebuilds, never answers wrong.
    `over`: only if the stamp is still that one (a log writer vouching for its append
    must not put back the store state a refresh replaced meanwhile: the next read would
    rebuild). Every write holds the stamp's flock, so that check and the write are one
    step; one without `over` (the store's, under the database's flock: the newest
    state) goes ahead even when the flock is not had in time."""
    body = _STAMP.pack(_STAMP_MAGIC, nonce, *key, *db_key, 0)[: _STAMP.size - 4]
    data = body + struct.pack("<I", zlib.crc32(body))
    try:  # never through a link (a linked .aidp/cache included), never into a FIFO
        fd = files.open_file(folder, f"{CACHE_DIR}/{STAMP_NAME}", os.O_RDWR | os.O_CREAT)
    except (OSError, StorageError):
        return
    try:
        held = flock_within(fd, fcntl.LOCK_EX, 0.2)
        if over is not None and (not held or _parse(os.pread(fd, _STAMP.size + 1, 0)) != over):
            return
        os.pwrite(fd, data, 0)  # one small write: whole or, if torn, failing its crc
    except OSError:
        pass
    finally:
        os.close(fd)  # (the flock with it)


def vouched_key(fd: int, seen: os.stat_result, *, trusted: bool, racy_ns: int) -> StatKey:
    """The stat data of the log open at `fd` to vouch for after a reader verified the
    prefix it `seen` it with: that, if unchanged since and older than `racy_ns` (younger
    stat data may hide a same-tick change), or vouched for already (`trusted`); else
    NO_KEY."""
    try:
        now = os.fstat(fd)
    except OSError:
        return NO_KEY
    recent = time.time_ns() - max(now.st_mtime_ns, now.st_ctime_ns) < racy_ns
    same = stat_key(now) == stat_key(seen)
    return stat_key(now) if same and (trusted or not recent) else NO_KEY


def vouch(log_dir: Path, nonce: bytes, dbfd: int, key: StatKey) -> None:
    """Stamp the store state `nonce` just committed (the caller holds the database's
    flock) with the log's stat data `key` (vouched_key): the database marked (`mark`),
    so equal stat data means this very file; unmarked, no stamp, and the next read
    rebuilds."""
    if (after := mark(dbfd)) is not None:
        write_stamp(log_dir, nonce, key, stat_key(after))


def mark(fd: int) -> os.stat_result | None:
    """The file's stat data after its modification time is set to a fine-grained value
    of our own, or None where it does not keep it. Any later change by another program
    sets the time to the clock's again, which cannot be that value: equal stat data
    then really means an unchanged file, even where timestamps are coarse."""
    value = time.time_ns() | 1
    try:
        os.utime(fd, ns=(os.fstat(fd).st_atime_ns, value))
        after = os.fstat(fd)
    except OSError:
        return None  # not the owner, say: the next read checks the contents instead
    return after if after.st_mtime_ns == value else None
