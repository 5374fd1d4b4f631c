"""Maintenance of the log: `repair` (drop damaged lines) and `compact` (drop what the
fold no longer needs: aidp.tasklist.setters).

Both replace the file atomically under the lock after copying it to
`.aidp/backups/`, and both stream it a few MB at a time, so memory does not grow with
the file beyond what the fold keeps (compact: a few keys per id).
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from aidp.core.plain import Plain
from aidp.tasklist import files
from aidp.tasklist.files import refuse_link, storage_error
from aidp.tasklist.fold import (
    DAMAGED,
    FIELDS,
    IGNORED,
    TASK,
    companion_key,
    key_of,
    packed,
    place,
)
from aidp.tasklist.line import (
    BOM,
    STAND_IN,
    all_zeros,
    data_stretches,
    line_end,
    parse_line,
)
from aidp.tasklist.log import LOG_NAME, TaskLog
from aidp.tasklist.setters import Needed, entry, lines_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import BinaryIO

    from aidp.core.model import Record


_STREAM = 4 << 20  # repair, compact and backups read this much at a time



def _backup_locked(log: TaskLog) -> Path:
    """Copy the tasklist to .aidp/backups/ (never through a link: aidp.tasklist.files)."""
    from aidp.core.model import format_ts, now_micros

    stamp = format_ts(now_micros()).replace(":", "").replace(".", "-")
    name = f"{LOG_NAME}.{stamp}.bak"
    target = log.dir / "backups" / name
    with files.folder(log.dir, "backups", create=True) as backups:
        fd = backups.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            with open(log.path, "rb") as source, os.fdopen(fd, "wb") as copy:
                copy_file(source, copy)
        except OSError as exc:
            backups.unlink(name)  # a half-written backup would only mislead
            raise storage_error("write the backup", target, exc) from exc
    return target

def copy_file(source: BinaryIO, copy: BinaryIO) -> None:
    """`source` into `copy` a few MB at a time. Holes (a sparse file's, `truncate -s
    +1G`) are not read and zeros not written: the copy has holes there, and the
    original's size (a damaged gigabyte of NULs costs no gigabyte of disk)."""
    size = os.fstat(source.fileno()).st_size
    for start, stop in data_stretches(source.fileno(), size):
        at = start
        while at < stop:
            block = os.pread(source.fileno(), min(_STREAM, stop - at), at)
            if not block:
                break
            if not all_zeros(block):
                copy.seek(at)
                copy.write(block)
            at += len(block)
    copy.truncate(size)


def _stream(log: TaskLog) -> Iterator[bytes]:
    """The file's lines (without newlines), read a few MB at a time."""
    log.require_regular()
    try:
        handle = open(log.path, "rb")  # noqa: SIM115 - closed below, generator
    except FileNotFoundError:
        return
    except OSError as exc:
        raise storage_error("read", log.path, exc) from exc
    with handle:
        carry = b""
        while True:
            try:
                block = handle.read(_STREAM)
            except OSError as exc:
                raise storage_error("read", log.path, exc) from exc
            if not block:
                break
            parts = (carry + block).split(b"\n")
            carry = parts.pop()
            yield from parts
            if b"\0" in carry:  # damage however long (line.STAND_IN): never held whole,
                stop = line_end(handle.fileno(), handle.tell(),  # holes are not read
                                os.fstat(handle.fileno()).st_size)
                if stop < 0:
                    break  # the last line, torn
                handle.seek(stop)
                yield STAND_IN
                carry = b""
        if carry:
            yield STAND_IN if b"\0" in carry else carry

NAMED = 20  # damaged lines repair says why of (the first ones)


def why_damaged(raw: bytes) -> str:
    """Why the fold's rule (line.admit) calls a line damage, in a few words: repair
    names each damaged line with it. Only for lines known to be damage."""
    import orjson

    from aidp.core.model import stamp_out_of_reach
    from aidp.tasklist.line import MAX_DEPTH, too_deep

    try:
        value = orjson.loads(raw.removeprefix(BOM))
    except orjson.JSONDecodeError:
        if raw.lstrip().startswith((b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>")):
            return "a git conflict marker"
        return "not JSON (a torn or garbled line)"
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not an object"
    stamp = value.get("updated_at")
    if stamp_out_of_reach(stamp):
        if str(stamp).startswith("0001"):
            return f"updated_at {stamp!r} is before year 1, outside the stamps aidp can write"
        return (f"updated_at {stamp!r} is past the stamps aidp can write "
                "(years 1 to 9999): no later change could win over it")
    if too_deep(value):
        return f"nested more than {MAX_DEPTH} levels deep, more than aidp writes back"
    return "a task without a usable id, or with a value of the wrong type"


def repair(log: TaskLog, *, dry_run: bool = False) -> MaintenanceReport:
    """Rewrite the file without its damaged lines, keeping a backup of the old one."""
    if not log.path.exists():
        log.check_root()
        return MaintenanceReport()  # nothing to repair, and nothing is created
    log.refuse_foreign_encoding()  # every line would read as damage, and be dropped
    with log.locked() if not dry_run else nullcontext():
        if not dry_run:
            refuse_link(log.path)
        report = MaintenanceReport()
        for number, raw in enumerate(_stream(log), start=1):
            report.lines_before += 1
            record = parse_line(raw)
            if record is None and not raw.strip():
                report.blank += 1
            elif record is None or place(record)[0] == DAMAGED:
                report.damaged_lines.append(number)
                if len(report.reasons) < NAMED:
                    report.reasons[number] = why_damaged(raw)
        report.lines_after = report.lines_before - report.blank - len(report.damaged_lines)
        if dry_run or (not report.damaged_lines and not report.blank):
            return report
        report.backup = _backup_locked(log)

        def write(handle: Any) -> None:
            for raw in _stream(log):
                record = parse_line(raw)
                if record is not None and place(record)[0] != DAMAGED:
                    handle.write(raw + b"\n")

        _replace_locked(log, write)
        report.rewritten = True
        return report

def compact(log: TaskLog) -> MaintenanceReport:
    """Drop every record the fold no longer needs (history stays in git and the
    backup): per typed id its winning record; per task the records that hold a part of
    its field-level merge (aidp.tasklist.setters), each with its task_fields record, so
    that every worktree and every later merge folds as before. Typed records without
    an id (kinds a newer version writes) cannot be folded and are all kept, in place.
    Two passes over the file, a few MB at a time: memory grows with the ids, not the
    lines."""
    if not log.path.exists():
        log.check_root()
        return MaintenanceReport()  # nothing to compact, and nothing is created
    log.refuse_foreign_encoding()
    with log.locked():
        refuse_link(log.path)
        report = MaintenanceReport()
        keep = bytearray(1)  # per line number: 1 to write it (index 0 unused)
        tasks: dict[str, Needed] = {}
        typed: dict[str, int] = {}  # typed id -> its winner's fold key, packed
        pending: dict[tuple[str, Any], tuple[int, Record]] = {}  # as the fold pairs them
        cleanup = False  # a kept line to write without its byte order mark or spaces
        for number, raw in enumerate(_stream(log), start=1):
            report.lines_before = number
            keep.append(0)
            record = parse_line(raw)
            if record is None:
                report.damaged += bool(raw.strip())
                continue
            kind, rid = place(record)
            if kind == IGNORED:
                report.unknown += 1
                keep[number] = 1
            elif kind == DAMAGED:
                report.damaged += 1
            elif kind == TASK:
                spec = pending.pop((rid, record.get("updated_at")), None)
                found = entry(key_of(record, number), spec[0] if spec else 0)
                needed = tasks.get(rid)
                if needed is None:
                    needed = tasks[rid] = Needed()
                needed.add(record, found, spec[1] if spec else None)
            elif record["type"] == FIELDS:
                waiting = companion_key(record)
                if waiting is not None:
                    pending[waiting] = (number, record)
            else:
                found = packed(key_of(record, number))
                if found > typed.get(rid, 0):
                    typed[rid] = found
            cleanup = cleanup or raw != raw.strip() or raw.startswith(BOM)
        for needed in tasks.values():
            for found in needed.kept():
                line, companion = lines_of(found)
                keep[line] = 1
                keep[companion] = 1  # 0: none (index 0 is never written)
        for found in typed.values():
            keep[lines_of(found)[0]] = 1
        for line, _record in pending.values():
            keep[line] = 1  # a companion still waiting: a merged task line may pair with it
        del tasks, typed, pending
        keep[0] = 0
        report.lines_after = keep.count(1)
        if report.lines_after == report.lines_before and not cleanup:
            return report
        report.backup = _backup_locked(log)

        def write(handle: Any) -> None:
            for number, raw in enumerate(_stream(log), start=1):
                if keep[number]:
                    handle.write(raw.removeprefix(BOM).strip() + b"\n")

        _replace_locked(log, write)
        report.rewritten = True
        return report


class MaintenanceReport(Plain):
    _fields = ("lines_before", "lines_after", "blank", "damaged", "damaged_lines", "backup",
               "rewritten", "unknown", "reasons")

    def __init__(
        self,
        lines_before: int = 0,
        lines_after: int = 0,
        blank: int = 0,
        damaged: int = 0,
        damaged_lines: list[int] | None = None,
        backup: Path | None = None,
        rewritten: bool = False,
        unknown: int = 0,
    ) -> None:
        self.lines_before = lines_before
        self.lines_after = lines_after
        self.blank = blank
        self.damaged = damaged
        self.damaged_lines = [] if damaged_lines is None else damaged_lines
        self.backup = backup
        self.rewritten = rewritten
        self.unknown = unknown  # typed records without an id, kept as they are
        self.reasons: dict[int, str] = {}  # repair: why, for the first NAMED damaged lines


def _replace_locked(log: TaskLog, write: Callable[[Any], object]) -> None:
    """Atomically replace the file with what `write(handle)` writes to a temp file
    (fsynced, then renamed over it); the caller holds the lock."""
    with files.folder(log.dir) as folder:
        temp = f"{LOG_NAME}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        try:
            fd = folder.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError as exc:
            raise storage_error("write", log.path, exc) from exc
        try:
            with os.fdopen(fd, "wb") as handle:
                write(handle)
                handle.flush()
                try:
                    os.fchmod(handle.fileno(), os.stat(log.path).st_mode & 0o777)
                except OSError:
                    pass  # no old file to copy the mode from: the default stays
                os.fsync(handle.fileno())
            folder.replace(temp, LOG_NAME)  # a link there is replaced, never followed
            log.changes += 1
        except BaseException as exc:
            folder.unlink(temp)
            if isinstance(exc, OSError):
                raise storage_error("write", log.path, exc) from exc
            raise
        # The new file is in place; syncing the folder makes the rename itself durable
        # (best effort: a failure here changes nothing already done).
        folder.sync()
