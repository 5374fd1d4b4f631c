"""What a line of the tasklist is: the record it stands for, or damage (THE rule, `admit`).

The fold (`aidp.tasklist.fold`), repair and compact, imports and the store's build all read lines
through `parse_line`; docs/file-format.md "Damage" lists what this module refuses.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from aidp.core.errors import StorageError
from aidp.core.model import CONTROL_RE, TASK_KEY_ORDER, Record, stamp_out_of_reach, task_tags
from aidp.tasklist.files import storage_error

if TYPE_CHECKING:
    from pathlib import Path

BOM = b"\xef\xbb\xbf"  # an editor's UTF-8 byte order mark, ahead of a line

# Task keys whose value must be a string when present; a task line that breaks this
# (hand edits, a foreign tool, a byte flip that still parses) is damage, like a torn
# line: skipped, counted and removed by repair, never handed to code that expects text.
# `tags` is a list of strings; a string there is read as one tag (mend_tags, issue 14).
_TEXT_KEYS = tuple(key for key in TASK_KEY_ORDER if key not in ("id", "tags"))


# How deep a line may nest: orjson reads 1,024 levels but writes only 254, and aidp's
# outputs put a record inside levels of their own (a JSON list, a report), so a record
# is written back only if it keeps well below: at most MAX_DEPTH levels, the line's own
# object being the first. Deeper is damage (issue 27): it would read, then fail every
# write and every JSON output of the task.
MAX_DEPTH = 128
_DEEP_BYTES = 2 * MAX_DEPTH  # a line nested deeper holds more than this many bytes


def parse_line(raw: bytes) -> Record | None:
    """The JSON object on this line, or None for blank lines and damage."""
    if not raw or raw.isspace():
        return None
    raw = raw.removeprefix(BOM)  # an editor's byte order mark: the record behind it is good
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return admit(value, raw)


def reread(raw: bytes) -> Record | None:
    """The record of a line `read_line` admitted before (the store keeps where such
    lines are): the same value parse_line gives, without checking again what admit
    checked — or None when it is not even an object any more (the file was rewritten
    meanwhile: the caller says so)."""
    try:
        value = orjson.loads(raw.removeprefix(BOM))
    except orjson.JSONDecodeError:
        return None
    if type(value) is not dict:
        return None
    if type(value.get("tags")) is str and "type" not in value:
        mend_tags(value)
    return value


def admit(value: object, raw: bytes) -> Record | None:
    """The record a decoded line stands for, or None when it is damage: THE rule of what
    a line is, after `orjson.loads(raw)` gave `value`. parse_line calls it, and through
    it read_line (the plain fold, the store's build and refresh), repair and compact;
    a decoder that reads lines in bulk must call it too. Damage: anything but an
    object; a task line without a usable id or with a non-text value where text belongs
    (well_typed_task); any record whose `updated_at` lies outside the stamps aidp can
    write back (model.stamp_out_of_reach); a line nested deeper than MAX_DEPTH. Cheap for an
    ordinary line: the stamp is looked at only when of year 0001 or 9999, the nesting
    only when the line is long and holds many brackets."""
    if type(value) is not dict:
        return None
    stamp = value.get("updated_at")
    if type(stamp) is str and stamp[:1] in "09" and stamp_out_of_reach(stamp):
        return None
    if "type" not in value:
        if not well_typed_task(value):  # it also measures the nesting of unknown keys
            return None
        if type(value.get("tags")) is str:
            mend_tags(value)
    elif len(raw) > _DEEP_BYTES and raw.count(b"{") + raw.count(b"[") > MAX_DEPTH \
            and too_deep(value):
        return None
    return value


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests objects and arrays more than `limit` levels deep (itself
    the first). Iterative: orjson hands over up to 1,024 levels, past Python's stack."""
    if type(value) is not dict and type(value) is not list:
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        for child in item.values() if type(item) is dict else item:
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))
    return False


_TEXT_KEY_SET = frozenset(_TEXT_KEYS)


def well_typed_task(record: Record) -> bool:
    """One pass over the record's values (this runs for every line of every fold); a
    value under an unknown key may nest at most MAX_DEPTH levels with the record."""
    rid = record.get("id")
    if type(rid) is not str or not rid:
        return False
    if not (rid.isascii() and rid.isprintable()) and CONTROL_RE.search(rid):
        return False  # an id is printed bare (--format ids) and typed back in shells
    for key, value in record.items():
        if type(value) is str:
            continue  # a string `tags` is one tag: mend_tags makes it a list
        if value is None:
            continue
        if key == "tags":
            if type(value) is not list:
                return False
            for tag in value:
                if type(tag) is not str:
                    return False
        elif key in _TEXT_KEY_SET:
            return False
        elif (type(value) is dict or type(value) is list) and too_deep(value, MAX_DEPTH - 1):
            return False  # an unknown key nested past what aidp can write back
    return True


def mend_tags(record: Record) -> Record:
    """A task read with a string `tags` gets the list task_tags gives, so every reader
    sees the same tags and any record aidp writes for the task carries a list of
    strings. parse_line and the index's bulk decode call it: the rule lives here."""
    if type(record.get("tags")) is str:
        record["tags"] = task_tags(record)
    return record


# --- lines read again where a cache says they are ---------------------------------------


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


CHUNK = 1 << 20  # the log is read this much at a time

# --- NUL bytes: damage at the cost of finding it (docs/file-format.md, "Damage") -------
# No JSON text holds a NUL byte, so a line with one is damage however long it is: a
# crash's zero-filled tail, a sparse file's hole (`truncate -s +1G`). A reader takes
# such a line longer than a chunk as this stand-in (one damaged line, as the line is)
# and skips the rest of it a chunk at a time, never reading a hole; so a gigabyte of
# NULs costs a few system calls and a megabyte of memory, not a parse of a gigabyte.
STAND_IN = b"\0"


def blocks(fd: int, start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) of the whole lines start:end (end is a line's end), a chunk each;
    a line longer than a chunk that holds a NUL comes as STAND_IN and its newline."""
    while start < end:
        step = CHUNK
        while not (cut := (data := read_span(fd, start, min(end, start + step))).rfind(
                b"\n") + 1):
            if start + step >= end:
                raise changed()  # no newline where the last one was
            if b"\0" in data:
                cut = line_end(fd, start + len(data), end)
                if cut < 0:
                    raise changed()
                yield start, STAND_IN + b"\n"
                start = cut
                break
            step *= 2  # a line longer than a chunk
        else:
            yield start, data[:cut]
            start += cut


def all_zeros(data: bytes) -> bool:
    """Whether `data` is only NUL bytes (a memcmp: bytes.count is four times slower)."""
    return data == bytes(len(data))


def line_end(fd: int, start: int, end: int) -> int:
    """The offset just past the first newline in start:end (-1: none), read a chunk at
    a time; holes (never written: zeros) hold no newline and are not read."""
    at = start
    while at < end:
        data_at, hole_at = _extent(fd, at, end)
        while data_at < hole_at:
            data = read_span(fd, data_at, min(hole_at, data_at + CHUNK))
            found = data.find(b"\n")
            if found >= 0:
                return data_at + found + 1
            data_at += len(data)
        at = hole_at if hole_at > at else end
    return -1


def _extent(fd: int, at: int, end: int) -> tuple[int, int]:
    """(start, end) of the first stretch of data at or after `at`, within end: (end, end)
    when only a hole is left. Where the file system cannot say, all of it is data."""
    try:
        data_at = os.lseek(fd, at, os.SEEK_DATA)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a hole up to the end of the file
            return end, end
        return at, end
    if data_at >= end:
        return end, end
    try:
        return data_at, min(end, os.lseek(fd, data_at, os.SEEK_HOLE))
    except OSError:
        return data_at, end


def last_line_end(fd: int, size: int) -> int:
    """Where the file's last whole line ends (0: it has none), read from its end; a
    run of zeros is stepped over a hole at a time where it is one (data_stretches)."""
    at, holes, step = size, None, 65536
    while at > 0:
        start = max(0, at - step)
        data = os.pread(fd, at - start, start)
        found = data.rfind(b"\n")
        if found >= 0:
            return start + found + 1
        if all_zeros(data):  # perhaps a hole: read no more of it
            holes = data_stretches(fd, size) if holes is None else holes
            at, step = _data_end_before(holes, start), min(step * 2, 4 * CHUNK)
        else:
            at = start
    return 0


def data_stretches(fd: int, size: int) -> list[tuple[int, int]]:
    """Every stretch of data of the file, in order (one for a file without holes)."""
    found: list[tuple[int, int]] = []
    at = 0
    while at < size:
        stretch = _extent(fd, at, size)
        if stretch[0] >= size:
            break
        found.append(stretch)
        at = stretch[1]
    return found


def _data_end_before(stretches: list[tuple[int, int]], at: int) -> int:
    """`at` when the byte before it is data; else where the data before its hole ends."""
    from bisect import bisect_left

    index = bisect_left(stretches, (at, at))  # the first stretch starting at `at` or later
    if index and stretches[index - 1][1] >= at:
        return at  # inside (or at the end of) a stretch of data: read on
    return stretches[index - 1][1] if index else 0


def folded_bytes(path: Path) -> bytes:
    """The file's bytes as a fold reads them (blocks, then torn_tail): a line with a
    NUL longer than a chunk as STAND_IN (docs/file-format.md, "Damage"), so a reader
    of the lines pays for a gigabyte of NULs no more than a list does; b"": no file."""
    try:
        with open(path, "rb", buffering=0) as handle:
            fd, size = handle.fileno(), os.fstat(handle.fileno()).st_size
            end = last_line_end(fd, size)
            return b"".join([*(data for _at, data in blocks(fd, 0, end)),
                             torn_tail(fd, end, size)])
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise storage_error("read", path, exc) from exc


def torn_tail(fd: int, end: int, size: int) -> bytes:
    """The bytes after the file's last whole line (end:size, a torn last line, which a
    fold takes as damage unless it is a record): as they are, or STAND_IN as soon as a
    NUL shows among them (no more of them is read)."""
    parts: list[bytes] = []
    while end < size:
        data = read_span(fd, end, min(size, end + CHUNK))
        if b"\0" in data:
            return STAND_IN
        parts.append(data)
        end += len(data)
    return b"".join(parts)


def crc_of(fd: int, end: int) -> int:
    """The crc32 of the file's first `end` bytes (end is a line's end), a block at a
    time: whether the log still starts with the lines a cache covers."""
    import zlib

    crc = 0
    for _at, data in blocks(fd, 0, end):
        crc = zlib.crc32(data, crc)
    return crc


class LogFile:
    """The log's descriptor, closed when the last reader of it is gone: the records of
    lines read_line admitted before, read again at their offsets (the store's rows)."""

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
        """The record of `raw` (reread), which must be `rid`'s: anything else means the
        file was rewritten in place meanwhile (changed)."""
        found = reread(raw)
        if found is None or found.get("id") != rid:
            raise changed()
        return found

    @classmethod
    def decode_all(cls, rows: list[tuple[str, bytes]]) -> list[Record]:
        """decode of each (id, line), in one orjson call (a line that is not JSON any
        more: each again, and the changed one says so)."""
        try:  # (a line behind a byte order mark is not JSON in an array: each, then)
            found = orjson.loads(b"[" + b",".join([raw for _rid, raw in rows]) + b"]")
        except orjson.JSONDecodeError:
            return [cls.decode(rid, raw) for rid, raw in rows]
        for value, (rid, _raw) in zip(found, rows, strict=True):
            if type(value) is not dict or value.get("id") != rid:
                raise changed()
            if type(value.get("tags")) is str and "type" not in value:
                mend_tags(value)  # as reread
        return found  # type: ignore[no-any-return]
