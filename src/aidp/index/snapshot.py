"""The snapshot file, `.aidp/cache/fold.snapshot`: the fold of a verified prefix of the
log, in sections that a read loads only as it needs them.

Layout: a fixed header (magic, format version, Python version, length and crc32 of
the head), the head (a random nonce naming this snapshot, the prefix of the log it
covers and that prefix's crc32, the snapshot file's own device and inode, and the
table of sections: name, offset, length, crc32 of each), then the sections. A
section is read with one pread and checked against its crc32 before it is
unmarshalled; a section that fails the check raises `Corrupt` (the caller rebuilds).
Which stat data of the log may be trusted to still hold that prefix is not in here
but in the stamp (`aidp.stamp`), which writers update after their appends.

Written with temp file + rename: a reader sees the old snapshot or the new one, whole;
a reader keeps the file it opened, so a rename during its read changes nothing for it.
"""

from __future__ import annotations

import marshal
import os
import stat
import struct
import sys
import time
import zlib
from typing import TYPE_CHECKING

from aidp.stamp import CACHE_DIR

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from pathlib import Path
    from typing import TypeAlias

    Section: TypeAlias = (
        "bytes | Copy | Callable[[], bytes] | Callable[[], Iterable[bytes | memoryview]]")

VERSION = 14  # 14: damage includes stamps out of reach and deep nesting (issue 27)
SNAPSHOT_NAME = "fold.snapshot"
MAGIC = b"aidpfold"
_HEADER = struct.Struct("<8sIIQI")  # magic, version, python, head length, head crc32
_HEAD = struct.Struct("<8sqIQQI")  # nonce, prefix covered, its crc32, own dev/inode, sections
_ENTRY = struct.Struct("<16sQQI")  # section name, offset, length, crc32
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

__all__ = ["CACHE_DIR", "SNAPSHOT_NAME", "Copy", "Corrupt", "SnapshotFile", "loads",
           "open_snapshot", "read_head", "write_snapshot"]


class Corrupt(Exception):
    """A section does not match its checksum: the snapshot cannot be used."""


def loads(data: bytes) -> object:
    """Unmarshal a section: only ever one that passed its checksum, of a snapshot whose
    head names its own inode (so written on this machine, by aidp)."""
    return marshal.loads(data)


class SnapshotFile:
    """An open snapshot whose head was checked; its sections are read on demand. The
    descriptor stays open while sections are read, so a snapshot replaced by a newer
    one meanwhile is still read whole."""

    def __init__(self, fd: int, nonce: bytes, offset: int, crc: int,
                 table: dict[str, tuple[int, int, int]]) -> None:
        self.fd = fd
        self.nonce = nonce
        self.offset = offset
        self.crc = crc
        self.table = table

    def __del__(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass

    def copy(self, name: str) -> Copy:
        """The section `name`, to be copied unchanged into a newer snapshot."""
        at, length, crc = self.table[name]
        return Copy(self.fd, at, length, crc)

    def section(self, name: str) -> bytes:
        """The bytes of a section, checked; Corrupt when missing, short or damaged."""
        found = self.table.get(name)
        if found is None:
            raise Corrupt(name)
        at, length, crc = found
        try:
            data = os.pread(self.fd, length, at)
        except OSError:
            raise Corrupt(name) from None
        if len(data) != length or zlib.crc32(data) != crc:
            raise Corrupt(name)
        return data


def _pyversion() -> int:
    return sys.version_info[0] * 100 + sys.version_info[1]  # marshal's format follows it


def _open_regular(path: str) -> tuple[int, os.stat_result] | None:
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    if not stat.S_ISREG(st.st_mode):  # a fifo or device: a read could block forever
        os.close(fd)
        return None
    return fd, st


def _read_head(fd: int) -> tuple[bytes, int, int, int, int, bytes] | None:
    """(nonce, offset, crc, dev, inode, table bytes) if header and head are whole."""
    try:
        fixed = os.pread(fd, _HEADER.size + _HEAD.size, 0)
    except OSError:
        return None
    if len(fixed) < _HEADER.size + _HEAD.size:
        return None
    magic, version, python, head_len, head_crc = _HEADER.unpack_from(fixed)
    if (magic, version, python) != (MAGIC, VERSION, _pyversion()):
        return None
    nonce, offset, crc, dev, ino, count = _HEAD.unpack_from(fixed, _HEADER.size)
    if head_len != _HEAD.size + count * _ENTRY.size:
        return None
    try:
        head = os.pread(fd, head_len, _HEADER.size)
    except OSError:
        return None
    if len(head) != head_len or zlib.crc32(head) != head_crc:
        return None
    return nonce, offset, crc, dev, ino, head[_HEAD.size:]


def open_snapshot(path: str) -> SnapshotFile | None:
    """The snapshot, if its head is whole and it was written here: its recorded inode
    must be the file's own, so a cache/ committed to a repository (it is git-ignored,
    but anyone can force-add it) is rebuilt, never unmarshalled. A fifo or device at
    the path is never read."""
    opened = _open_regular(path)
    if opened is None:
        return None
    fd, st = opened
    head = _read_head(fd)
    if head is None or (head[3], head[4]) != (st.st_dev, st.st_ino):
        os.close(fd)
        return None
    nonce, offset, crc, _dev, _ino, raw = head
    table = {name.rstrip(b"\0").decode("ascii", "replace"): (start, length, section_crc)
             for name, start, length, section_crc in _ENTRY.iter_unpack(raw)}
    return SnapshotFile(fd, nonce, offset, crc, table)


def read_head(path: str) -> tuple[bytes, int] | None:
    """(nonce, prefix covered) from the snapshot's head alone: enough to tell whether
    it is current. Not a validation: open_snapshot is."""
    opened = _open_regular(path)
    if opened is None:
        return None
    fd, _st = opened
    try:
        head = _read_head(fd)
    finally:
        os.close(fd)
    return None if head is None else (head[0], head[1])


class Copy:
    """A section copied unchanged from another snapshot file: its bytes are streamed, and
    its checksum is the one recorded there (a damaged section stays detectably so)."""

    __slots__ = ("at", "crc", "fd", "length")

    def __init__(self, fd: int, at: int, length: int, crc: int) -> None:
        self.fd, self.at, self.length, self.crc = fd, at, length, crc

    def __len__(self) -> int:
        return self.length


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _copy(data: Copy, fd: int) -> None:
    """Append the section `data` names to `fd`: by the kernel where it can."""
    done = 0
    copy_range = getattr(os, "copy_file_range", None)
    if copy_range is not None:  # nothing passes through this process
        start = os.lseek(fd, 0, os.SEEK_CUR)
        try:
            while done < data.length:
                moved = copy_range(data.fd, fd, data.length - done, data.at + done)
                if not moved:
                    break
                done += moved
        except OSError:
            done = 0
            os.lseek(fd, start, os.SEEK_SET)
    while done < data.length:
        block = os.pread(data.fd, min(1 << 20, data.length - done), data.at + done)
        if not block:
            raise OSError("the snapshot copied from shrank")
        _write_all(fd, block)
        done += len(block)


def write_snapshot(folder: Path, offset: int, crc: int,
                   sections: Sequence[tuple[str, Section]]) -> bytes | None:
    """Write a snapshot of the prefix `offset` (crc32 `crc`) into `folder`/cache/ (folder:
    .aidp/, or the fallback under the user's cache folder); its nonce, or None when it
    could not be written (a read-only checkout). Never through a symbolic link: a
    cloned repository decides what .aidp/ entries are."""
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
            head_len = _HEAD.size + len(sections) * _ENTRY.size
            at = _HEADER.size + head_len
            os.lseek(fd, at, os.SEEK_SET)  # sections first, one at a time; the head last
            entries = []
            for name, made in sections:
                data = made() if callable(made) else made
                if isinstance(data, Copy):
                    _copy(data, fd)
                    check, length = data.crc, data.length
                elif isinstance(data, bytes):
                    _write_all(fd, data)
                    check, length = zlib.crc32(data), len(data)
                else:  # pieces, written as they are made (index/listing.py)
                    check = length = 0
                    for piece in data:
                        _write_all(fd, piece)
                        check, length = zlib.crc32(piece, check), length + len(piece)
                entries.append(_ENTRY.pack(name.encode("ascii"), at, length, check))
                at += length
                del data
            head = _HEAD.pack(nonce, offset, crc, own.st_dev, own.st_ino,
                              len(sections)) + b"".join(entries)
            header = _HEADER.pack(MAGIC, VERSION, _pyversion(), len(head), zlib.crc32(head))
            os.lseek(fd, 0, os.SEEK_SET)
            _write_all(fd, header + head)
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
