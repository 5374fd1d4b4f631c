"""What a line of the tasklist is: the record it stands for, or damage (THE rule, `admit`).

The fold (`aidp.tasklist.fold`), repair and compact, imports and the store's build all read lines
through `parse_line`; docs/file-format.md "Damage" lists what this module refuses.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterator
from typing import Any

import orjson

from aidp.core.errors import StorageError
from aidp.core.model import CONTROL_RE, TASK_KEY_ORDER, Record, stamp_out_of_reach, task_tags

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


def blocks(fd: int, start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) of the whole lines start:end (end is a line's end), a chunk each."""
    while start < end:
        step = CHUNK
        while not (cut := (data := read_span(fd, start, min(end, start + step))).rfind(
                b"\n") + 1):
            if start + step >= end:
                raise changed()  # no newline where the last one was
            step *= 2  # a line longer than a chunk
        yield start, data[:cut]
        start += cut


def crc_of(fd: int, end: int) -> int:
    """The crc32 of the file's first `end` bytes (end is a line's end), a block at a
    time: whether the log still starts with the lines a cache covers."""
    import zlib

    crc = 0
    for _at, data in blocks(fd, 0, end):
        crc = zlib.crc32(data, crc)
    return crc


def lines_at(fd: int, offsets: array[int], end: int) -> Iterator[tuple[int, bytes]]:
    """(offset, line) at each of `offsets` (ascending, each a line's start before `end`),
    read a chunk at a time (blocks): the store's winning lines, read again."""
    data, base = b"", 0
    for off in offsets:
        at = off - base
        stop = data.find(b"\n", at) if at < len(data) else -1
        if stop < 0:
            (base, data), at = next(blocks(fd, off, end)), 0
            stop = data.find(b"\n")
        yield off, data[at:stop]


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
        try:
            found = orjson.loads(b"[" + b",".join(raw.removeprefix(BOM) for _rid, raw in rows)
                                 + b"]")
        except orjson.JSONDecodeError:
            return [cls.decode(rid, raw) for rid, raw in rows]
        for value, (rid, _raw) in zip(found, rows, strict=True):
            if type(value) is not dict or value.get("id") != rid:
                raise changed()
            if type(value.get("tags")) is str and "type" not in value:
                mend_tags(value)  # as reread
        return found  # type: ignore[no-any-return]
