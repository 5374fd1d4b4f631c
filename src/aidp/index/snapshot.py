"""The snapshot file, `.aidp/cache/fold.snapshot`: columns of a verified prefix of the log.

Layout: a fixed header (magic, format version, Python version, lengths and crc32 of
the head and the body), the head (a random nonce naming this snapshot, the prefix of
the log it covers and that prefix's crc32, the snapshot file's own device and inode),
and the body (the columns, marshalled). Which stat data of the log may be trusted to
still hold that prefix is not in here but in the stamp (`aidp.log.read_stamp`), which
writers update after their appends.

Written with temp file + rename: a reader sees the old snapshot or the new one, whole.
"""

from __future__ import annotations

import os
import stat
import struct
import sys
import time
import zlib
from typing import TYPE_CHECKING

from aidp.stamp import CACHE_DIR

if TYPE_CHECKING:
    from pathlib import Path

VERSION = 5
SNAPSHOT_NAME = "fold.snapshot"
MAGIC = b"aidpfold"
_HEADER = struct.Struct("<8sIIQIQI")  # magic, version, python, head len/crc, body len/crc
_HEAD = struct.Struct("<8sqIQQ")  # nonce, prefix covered, its crc32, own dev, own inode
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

__all__ = ["CACHE_DIR", "SNAPSHOT_NAME", "Snapshot", "read_snapshot", "write_snapshot"]


class Snapshot:
    def __init__(self, nonce: bytes, offset: int, crc: int, body: memoryview) -> None:
        self.nonce = nonce
        self.offset = offset
        self.crc = crc
        self.body = body


def _pyversion() -> int:
    return sys.version_info[0] * 100 + sys.version_info[1]  # marshal's format follows it


def read_snapshot(path: str) -> Snapshot | None:
    """The snapshot, if it is whole and was written here. Its recorded inode must be the
    file's own: a cache/ committed to a repository (it is git-ignored, but anyone can
    force-add it) is rebuilt, never unmarshalled. A fifo or device at the path is never
    read (a read could block forever)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) < _HEADER.size + _HEAD.size:
        return None
    magic, version, python, head_len, head_crc, body_len, body_crc = _HEADER.unpack_from(data)
    if (magic, version, python) != (MAGIC, VERSION, _pyversion()):
        return None
    head_end = _HEADER.size + head_len
    if head_len != _HEAD.size or len(data) != head_end + body_len:
        return None
    view = memoryview(data)  # slices of a view copy nothing
    head = view[_HEADER.size : head_end]
    if zlib.crc32(head) != head_crc:
        return None
    nonce, offset, crc, own_dev, own_ino = _HEAD.unpack_from(head)
    if (own_dev, own_ino) != (st.st_dev, st.st_ino):
        return None
    body = view[head_end:]
    if zlib.crc32(body) != body_crc:
        return None
    return Snapshot(nonce, offset, crc, body)


def read_head(path: str) -> tuple[bytes, int] | None:
    """(nonce, prefix covered) from the snapshot's head alone, without reading its body:
    enough to tell whether it is current. Not a validation: read_snapshot is."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.pread(fd, _HEADER.size + _HEAD.size, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) < _HEADER.size + _HEAD.size:
        return None
    magic, version, python, head_len, head_crc, _body_len, _body_crc = _HEADER.unpack_from(data)
    head = data[_HEADER.size :]
    if ((magic, version, python) != (MAGIC, VERSION, _pyversion()) or head_len != _HEAD.size
            or zlib.crc32(head) != head_crc):
        return None
    nonce, offset, _crc, _dev, _ino = _HEAD.unpack(head)
    return nonce, offset


def write_snapshot(folder: Path, offset: int, crc: int, body: bytes | memoryview) -> bytes | None:
    """Write a snapshot of the prefix `offset` (crc32 `crc`) into `folder`/cache/ (folder:
    .aidp/, or the fallback under the user's cache folder);
    its nonce, or None when it could not be written (a read-only checkout). Never
    through a symbolic link: a cloned repository decides what .aidp/ entries are."""
    cache = folder / CACHE_DIR
    temp = cache / f"{SNAPSHOT_NAME}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    nonce = os.urandom(8)
    try:
        if cache.is_symlink():
            return None
        if not cache.is_dir():
            cache.mkdir()
            # Ignored even where .aidp/.gitignore is missing (a folder made by hand).
            (cache / ".gitignore").write_bytes(b"# Derived by aidp; safe to delete.\n*\n")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
        try:
            own = os.fstat(fd)  # the inode the rename keeps: readers check it
            head = _HEAD.pack(nonce, offset, crc, own.st_dev, own.st_ino)
            header = _HEADER.pack(MAGIC, VERSION, _pyversion(), len(head), zlib.crc32(head),
                                  len(body), zlib.crc32(body))
            for part in (header, head, body):
                view = memoryview(part)
                while view:
                    view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temp, cache / SNAPSHOT_NAME)
        _sweep(cache)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass
        return None
    return nonce


def _sweep(cache: Path) -> None:
    """Remove temp files that a writer killed before its rename left behind."""
    cutoff = time.time() - 3600
    for entry in os.scandir(cache):
        if entry.name.endswith(".tmp"):
            try:
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                pass
