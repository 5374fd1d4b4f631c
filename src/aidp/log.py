"""The event log: `.aidp/tasklist.jsonl`, read and folded, appended under a lock.

Every line is a full snapshot of one record. The state is a pure function of the
lines: per id, the record with the greatest (updated_at, line number) wins. Lines
that are not JSON objects are damage: skipped and counted, never fatal.

Tasks and typed records (those with a "type" key, like todo lists) fold into two
separate namespaces, so a typed record can never show up as a task.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from aidp.errors import StorageError
from aidp.model import TASK_KEY_ORDER, Record, ts_of
from aidp.paths import DATA_DIR

LOG_NAME = "tasklist.jsonl"
LOCK_NAME = "tasklist.jsonl.lock"
LOCK_NOTICE_SECONDS = 1.0

# Local-only state under .aidp/ that must never be committed.
GITIGNORE = """\
# Local state of aidp: caches, locks, backups and run transcripts.
# Only tasklist.jsonl (and config.toml) are meant to be committed;
# config.local.toml is your own (it needs no 'aidp trust': docs/security.md).
config.local.toml
*.lock
cache/
backups/
runs/
*.tmp
"""

# (updated_at in µs, line number): the fold's order.
FoldKey = tuple[int, int]


class _Plain:
    """Value classes written out instead of @dataclass: each dataclass costs about a
    millisecond of code generation at import, on every one of aidp's many start-ups."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._fields)

    __hash__ = None  # type: ignore[assignment]


class Fold(_Plain):
    """The folded state of a log, plus what it takes to extend it with later lines."""

    _fields = ("tasks", "typed", "task_keys", "typed_keys", "damaged", "lines",
               "ends_with_newline")

    def __init__(
        self,
        tasks: dict[str, Record] | None = None,
        typed: dict[str, Record] | None = None,
        task_keys: dict[str, FoldKey] | None = None,
        typed_keys: dict[str, FoldKey] | None = None,
        damaged: int = 0,
        lines: int = 0,  # lines consumed, so line numbers continue across appends
        ends_with_newline: bool = True,
    ) -> None:
        self.tasks = {} if tasks is None else tasks
        self.typed = {} if typed is None else typed
        self.task_keys = {} if task_keys is None else task_keys
        self.typed_keys = {} if typed_keys is None else typed_keys
        self.damaged = damaged
        self.lines = lines
        self.ends_with_newline = ends_with_newline

    def add_line(self, raw: bytes) -> None:
        """Fold one more line (without its newline) into the state."""
        self.lines += 1
        record = parse_line(raw)
        if record is None:
            if raw.strip():
                self.damaged += 1
            return
        self.add_record(record, self.lines)

    def add_record(self, record: Record, line: int) -> None:
        rid = record.get("id")
        if "type" in record:
            if not isinstance(rid, str):
                return  # a typed record of a kind we cannot fold: ignored, not damage
            records, keys = self.typed, self.typed_keys
        else:
            if not isinstance(rid, str) or not rid:
                self.damaged += 1
                return
            records, keys = self.tasks, self.task_keys
        key = (ts_of(record), line)
        previous = keys.get(rid)
        if previous is None or key > previous:
            keys[rid] = key
            records[rid] = record

    def feed(self, data: bytes) -> None:
        """Fold a chunk of the file that starts at a line boundary."""
        if not data:
            return
        parts = data.split(b"\n")
        tail = parts.pop()  # after the last newline: b"" or a torn last line
        for raw in parts:
            self.add_line(raw)
        if tail:
            self.add_line(tail)
            self.ends_with_newline = False
        else:
            self.ends_with_newline = True


_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_BOM = b"\xef\xbb\xbf"

# Task keys whose value must be a string when present; a task line that breaks this
# (hand edits, a foreign tool, a byte flip that still parses) is damage, like a torn
# line: skipped, counted and removed by repair, never handed to code that expects text.
_TEXT_KEYS = tuple(key for key in TASK_KEY_ORDER if key not in ("id", "tags"))


def parse_line(raw: bytes) -> Record | None:
    """The JSON object on this line, or None for blank lines and damage."""
    if not raw or raw.isspace():
        return None
    raw = raw.removeprefix(_BOM)  # an editor's byte order mark: the record behind it is good
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    if "type" not in value and not _well_typed_task(value):
        return None
    return value


def _well_typed_task(record: Record) -> bool:
    rid = record.get("id")
    if not isinstance(rid, str) or not rid or _CONTROL_RE.search(rid):
        return False  # an id is printed bare (--format ids) and typed back in shells
    for key in _TEXT_KEYS:
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            return False
    tags = record.get("tags")
    return tags is None or (isinstance(tags, list) and all(isinstance(t, str) for t in tags))


def fold_bytes(data: bytes) -> Fold:
    fold = Fold()
    fold.feed(data)
    return fold


def encode(records: list[Record]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def _storage_error(action: str, path: Path, exc: OSError) -> StorageError:
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENOSPC:
        reason = "no space left on device"
    return StorageError(f"Cannot {action} {path}: {reason}; the tasklist was not changed")


# git stores symbolic links, so a cloned repository decides what .aidp/ entries are: a
# tasklist linked to ~/.bashrc must never receive a line. Writes open with O_NOFOLLOW.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_LINK_ERRNOS = (errno.ELOOP, errno.EMLINK)


def _link_error(path: Path) -> StorageError:
    return StorageError(
        f"Cannot write {path}: it is a symbolic link, and aidp writes only to its own "
        "files in .aidp/; the tasklist was not changed"
    )


def _refuse_link(path: Path) -> None:
    if path.is_symlink():
        raise _link_error(path)


class TaskLog:
    """One project's `.aidp/tasklist.jsonl`."""

    def __init__(
        self,
        root: Path,
        *,
        create_root: bool = True,
        on_wait: Callable[[Path], None] | None = None,
    ) -> None:
        """`create_root=False` (the CLI): a write refuses to create a missing project folder.
        `on_wait(lock_path)` is called once when a lock has been held by another process
        for LOCK_NOTICE_SECONDS, so a person knows why the command waits."""
        self.root = root
        self.create_root = create_root
        self.on_wait = on_wait
        self.dir = root / DATA_DIR
        self.path = self.dir / LOG_NAME
        self.lock_path = self.dir / LOCK_NAME
        # `aidp init` sets this: the user asked for a tasklist here, even in a linked .aidp/.
        self.adopt_linked_dir = False

    # --- reading ------------------------------------------------------------------

    def _require_regular(self) -> None:
        """A fifo, socket or device where the tasklist should be would hang a read or
        swallow a write: refuse it (a missing file is fine, a symlink to a file too)."""
        try:
            mode = os.stat(self.path).st_mode
        except OSError:
            return  # missing, or a dangling link: the open that follows reports it
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            raise StorageError(f"Cannot use {self.path}: it is not a regular file")

    def read_bytes(self) -> bytes:
        self._require_regular()
        try:
            with open(self.path, "rb") as handle:
                return handle.read()
        except FileNotFoundError:
            return b""
        except IsADirectoryError as exc:
            raise _storage_error("read", self.path, exc) from exc
        except OSError as exc:
            raise _storage_error("read", self.path, exc) from exc

    def read(self) -> Fold:
        """The folded state. Never creates anything."""
        self._require_regular()
        with self._shared_lock():
            return self._fold_current()

    def _fold_current(self) -> Fold:
        from aidp import index  # the incremental snapshot; same answers as a full fold

        return index.load(self)

    def full_fold(self) -> Fold:
        return fold_bytes(self.read_bytes())

    def scan(self) -> Iterator[tuple[int, bytes, Record | None]]:
        """Every line: (line number, raw bytes, record or None)."""
        for number, raw in enumerate(_lines(self.read_bytes()), start=1):
            yield number, raw, parse_line(raw)

    # --- locking ------------------------------------------------------------------

    @contextmanager
    def _shared_lock(self) -> Iterator[None]:
        """Readers wait for a writer's single write to finish, so they never see half a
        line. Without a lock file nobody has written yet, and a read creates nothing."""
        try:
            fd = os.open(self.lock_path, os.O_RDONLY)
        except OSError:
            yield
            return
        try:
            self._flock(fd, fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """The exclusive write lock; creates .aidp/ on first use."""
        self.ensure_dir()
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o644)
        except OSError as exc:
            if exc.errno in _LINK_ERRNOS:
                raise _link_error(self.lock_path) from exc
            raise _storage_error("lock", self.lock_path, exc) from exc
        try:
            self._flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock; a killed holder releases it too

    def _check_linked_dir(self) -> None:
        """A `.aidp` that is a symbolic link may be the user's (a folder kept elsewhere)
        or planted by a cloned repository to make aidp write where a shell reads
        (`.aidp -> ../../.bashrc.d`). Writes go through it only where a tasklist already
        is, or after the user ran `aidp init`, which says where it wrote."""
        if self.adopt_linked_dir or not self.dir.is_symlink() or os.path.lexists(self.path):
            return
        target = os.path.realpath(self.dir)
        raise StorageError(
            f"Cannot create {self.path}: {self.dir} is a symbolic link to {target}, and "
            "aidp starts no tasklist through a link a repository could have planted; if "
            "you made the link, run 'aidp init' once; nothing was written"
        )

    def _check_root(self) -> None:
        if not self.create_root and not self.root.is_dir():
            # A mistyped --dir or AIDP_DIR must not grow a tree of folders somewhere.
            problem = "is not a folder" if self.root.exists() else "does not exist"
            raise StorageError(
                f"Cannot create {self.dir}: the project folder {self.root} {problem} "
                "(check --dir and AIDP_DIR); the tasklist was not changed"
            )

    def ensure_dir(self) -> None:
        self._check_root()
        self._check_linked_dir()
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            ignore = self.dir / ".gitignore"
            try:  # created once, never through a link (even a dangling one)
                fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
            except FileExistsError:
                pass
            else:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(GITIGNORE)
        except OSError as exc:
            raise _storage_error("create", self.dir, exc) from exc

    def _flock(self, fd: int, mode: int) -> None:
        """Take the lock; if another process holds it, wait, telling `on_wait` after a
        moment. A holder that dies releases it: waiting never outlives a crash."""
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if self.on_wait is None:
                fcntl.flock(fd, mode)
                return
        import threading  # only when contended: kept off start-up

        notice = threading.Timer(LOCK_NOTICE_SECONDS, self.on_wait, (self.lock_path,))
        notice.daemon = True
        notice.start()
        try:
            fcntl.flock(fd, mode)
        finally:
            notice.cancel()

    # --- writing ------------------------------------------------------------------

    def _append_locked(self, records: list[Record]) -> None:
        """One write() of whole lines; the caller holds the lock. On failure the file
        is cut back to its old length, so it is left exactly as it was."""
        if not records:
            return
        data = encode(records)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | _NOFOLLOW, 0o644)
        except OSError as exc:
            if exc.errno in _LINK_ERRNOS:
                raise _link_error(self.path) from exc
            raise _storage_error("write", self.path, exc) from exc
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise StorageError(f"Cannot use {self.path}: it is not a regular file")
            size = info.st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # a torn last line stays its own (damaged) line
            try:
                written = 0
                view = memoryview(data)
                while written < len(data):
                    written += os.write(fd, view[written:])
            except OSError as exc:
                os.ftruncate(fd, size)
                raise _storage_error("write", self.path, exc) from exc
        finally:
            os.close(fd)

    def append(self, records: list[Record]) -> None:
        with self.locked():
            self._append_locked(records)

    def update(self, change: Callable[[Fold], list[Record]]) -> list[Record]:
        """Read-modify-append under the lock: `change` sees the current state and returns
        the records to append; concurrent processes lose no update.

        `change` may run twice: on a project without .aidp/ it is first tried on the
        empty state, so a change that writes nothing (or fails) creates nothing. Its
        side effects must therefore be idempotent (assign results, do not accumulate).
        """
        if not self.dir.exists() and not change(Fold()):
            return []
        with self.locked():
            fold = self._fold_current()
            records = change(fold)
            self._append_locked(records)
            return records

    def replace_locked(self, data: bytes) -> None:
        """Atomically replace the file (temp file, fsync, rename); the caller holds the lock."""
        try:
            import tempfile  # only repair and compact need it: kept off start-up

            fd, temp = tempfile.mkstemp(prefix=LOG_NAME + ".", suffix=".tmp", dir=self.dir)
        except OSError as exc:
            raise _storage_error("write", self.path, exc) from exc
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.chmod(temp, os.stat(self.path).st_mode & 0o777)
            except OSError:
                pass  # no old file to copy the mode from: the default stays
            os.replace(temp, self.path)
        except OSError as exc:
            try:
                os.unlink(temp)
            except OSError:
                pass
            raise _storage_error("write", self.path, exc) from exc
        # The new file is in place; syncing the folder makes the rename itself durable.
        # It is the last, best-effort step: a failure here changes nothing already done.
        try:
            dir_fd = os.open(self.dir, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError:
            pass

    # --- maintenance ----------------------------------------------------------------

    def _backup_locked(self, data: bytes) -> Path:
        from aidp.model import format_ts, now_micros

        folder = self.dir / "backups"
        stamp = format_ts(now_micros()).replace(":", "").replace(".", "-")
        target = folder / f"{LOG_NAME}.{stamp}.bak"
        _refuse_link(folder)
        try:
            folder.mkdir(exist_ok=True)
            target.write_bytes(data)
        except OSError as exc:
            try:
                target.unlink()  # a half-written backup would only mislead
            except OSError:
                pass
            raise _storage_error("write the backup", target, exc) from exc
        return target

    def repair(self, *, dry_run: bool = False) -> MaintenanceReport:
        """Rewrite the file without its damaged lines, keeping a backup of the old one."""
        if not self.path.exists():
            self._check_root()
            return MaintenanceReport()  # nothing to repair, and nothing is created
        with self.locked() if not dry_run else self._shared_lock():
            if not dry_run:
                _refuse_link(self.path)
            data = self.read_bytes()
            kept: list[bytes] = []
            report = MaintenanceReport()
            for number, raw in enumerate(_lines(data), start=1):
                report.lines_before += 1
                record = parse_line(raw)
                if record is None and not raw.strip():
                    report.blank += 1
                elif record is None or ("type" not in record and not _has_id(record)):
                    report.damaged_lines.append(number)
                else:
                    kept.append(raw + b"\n")
            report.lines_after = len(kept)
            if dry_run or (not report.damaged_lines and not report.blank):
                return report
            report.backup = self._backup_locked(data)
            self.replace_locked(b"".join(kept))
            report.rewritten = True
            return report

    def compact(self) -> MaintenanceReport:
        """Keep only the winning record per id (history stays in git and the backup)."""
        if not self.path.exists():
            self._check_root()
            return MaintenanceReport()  # nothing to compact, and nothing is created
        with self.locked():
            _refuse_link(self.path)
            data = self.read_bytes()
            fold = fold_bytes(data)
            report = MaintenanceReport(lines_before=fold.lines)
            winners = sorted(
                [
                    *((key[1], fold.tasks[tid]) for tid, key in fold.task_keys.items()),
                    *((key[1], fold.typed[rid]) for rid, key in fold.typed_keys.items()),
                ],
                key=lambda pair: pair[0],
            )
            out = encode([record for _line, record in winners])
            report.lines_after = len(winners)
            report.damaged = fold.damaged
            if out == data:
                return report
            report.backup = self._backup_locked(data)
            self.replace_locked(out)
            report.rewritten = True
            return report


class MaintenanceReport(_Plain):
    _fields = ("lines_before", "lines_after", "blank", "damaged", "damaged_lines", "backup",
               "rewritten")

    def __init__(
        self,
        lines_before: int = 0,
        lines_after: int = 0,
        blank: int = 0,
        damaged: int = 0,
        damaged_lines: list[int] | None = None,
        backup: Path | None = None,
        rewritten: bool = False,
    ) -> None:
        self.lines_before = lines_before
        self.lines_after = lines_after
        self.blank = blank
        self.damaged = damaged
        self.damaged_lines = [] if damaged_lines is None else damaged_lines
        self.backup = backup
        self.rewritten = rewritten


def _lines(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def _has_id(record: Record) -> bool:
    rid = record.get("id")
    return isinstance(rid, str) and bool(rid)


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)
