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
import struct
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Protocol

import orjson

from aidp.errors import StorageError
from aidp.fold import DAMAGED, IGNORED, TASK, TYPED, FoldKey, beats, key_of, place
from aidp.model import TASK_KEY_ORDER, Record
from aidp.paths import DATA_DIR

LOG_NAME = "tasklist.jsonl"
LOCK_NAME = "tasklist.jsonl.lock"
LOCK_NOTICE_SECONDS = 1.0
# A writer waits at most this long for another writer's lock (--lock-timeout,
# AIDP_LOCK_TIMEOUT): a stopped or hung holder must not hang every command forever.
DEFAULT_LOCK_TIMEOUT = 30.0
LOCK_TIMEOUT_ENV = "AIDP_LOCK_TIMEOUT"
# AIDP_FSYNC=1: every append is fsynced before the command reports success.
FSYNC_ENV = "AIDP_FSYNC"
CACHE_DIR = "cache"  # derived, git-ignored state (aidp.index's snapshot and the stamp)
STAMP_NAME = "log.stamp"

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
        kind, rid = place(record)
        if kind == TASK:
            records, keys = self.tasks, self.task_keys
        elif kind == TYPED:
            records, keys = self.typed, self.typed_keys
        else:
            if kind == DAMAGED:
                self.damaged += 1
            return  # IGNORED: a typed record of a kind we cannot fold, not damage
        key = key_of(record, line)
        if beats(key, keys.get(rid)):
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
_STREAM = 4 << 20  # repair, compact and backups read this much at a time

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
    if "type" not in value and not well_typed_task(value):
        return None
    return value


_TEXT_KEY_SET = frozenset(_TEXT_KEYS)


def well_typed_task(record: Record) -> bool:
    """One pass over the record's values (this runs for every line of every fold)."""
    rid = record.get("id")
    if type(rid) is not str or not rid:
        return False
    if not (rid.isascii() and rid.isprintable()) and _CONTROL_RE.search(rid):
        return False  # an id is printed bare (--format ids) and typed back in shells
    for key, value in record.items():
        if value is None or type(value) is str:
            continue
        if key == "tags":
            if type(value) is not list:
                return False
            for tag in value:
                if type(tag) is not str:
                    return False
        elif key in _TEXT_KEY_SET:
            return False
    return True


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


class Reader(Protocol):
    """What reads the state for `TaskLog.read` (aidp.index registers itself): the same
    answers as `full_fold`, faster."""

    def load(self, log: TaskLog, *, whole_lines: bool = False) -> Fold: ...

    def warm(self, log: TaskLog) -> None: ...


_reader: Reader | None = None


def use_reader(reader: Reader | None) -> None:
    """Read through `reader` (None: plain folds). Importing aidp.index does this, so
    dependencies point one way: index builds on log, log knows only this protocol."""
    global _reader  # noqa: PLW0603 - one process-wide choice, made at import
    _reader = reader


class _Alarm(Exception):
    """The timer that bounds a lock wait rang."""


class TaskLog:
    """One project's `.aidp/tasklist.jsonl`."""

    def __init__(
        self,
        root: Path,
        *,
        create_root: bool = True,
        on_wait: Callable[[Path], None] | None = None,
        lock_timeout: float | None = None,
    ) -> None:
        """`create_root=False` (the CLI): a write refuses to create a missing project folder.
        `on_wait(lock_path)` is called once when a lock has been held by another process
        for LOCK_NOTICE_SECONDS, so a person knows why the command waits.
        `lock_timeout`: how long a write waits for the lock (default: AIDP_LOCK_TIMEOUT,
        else DEFAULT_LOCK_TIMEOUT seconds)."""
        self.root = root
        self.create_root = create_root
        self.on_wait = on_wait
        if lock_timeout is None:
            lock_timeout = parse_lock_timeout(os.environ.get(LOCK_TIMEOUT_ENV),
                                              what=LOCK_TIMEOUT_ENV)
        self.lock_timeout = lock_timeout
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
        """The folded state. Never creates anything, and never waits: the file is only
        ever appended to, so a reader folds what is there. A last line without its
        newline that a writer is writing right now is left for the next read; one that
        nobody is writing is damage, as always."""
        self._require_regular()
        fold = self._fold_current()
        if not fold.ends_with_newline and self.writer_active():
            fold = self._fold_current(whole_lines=True)
        return fold

    def _fold_current(self, *, whole_lines: bool = False) -> Fold:
        if _reader is None:
            return self.full_fold(whole_lines=whole_lines)
        return _reader.load(self, whole_lines=whole_lines)

    def full_fold(self, *, whole_lines: bool = False) -> Fold:
        data = self.read_bytes()
        if whole_lines:
            data = data[: data.rfind(b"\n") + 1]
        return fold_bytes(data)

    def scan(self) -> Iterator[tuple[int, bytes, Record | None]]:
        """Every line: (line number, raw bytes, record or None)."""
        for number, raw in enumerate(_lines(self.read_bytes()), start=1):
            yield number, raw, parse_line(raw)

    # --- locking ------------------------------------------------------------------

    def writer_active(self) -> bool:
        """Whether another process holds the write lock right now (a probe: this never
        waits and holds nothing afterwards)."""
        try:
            fd = os.open(self.lock_path, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW)
        except OSError:
            return False
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return False
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            except OSError:
                return False
            return False
        finally:
            os.close(fd)  # releases the probe's shared lock at once

    @contextmanager
    def locked(self) -> Iterator[None]:
        """The exclusive write lock; creates .aidp/ on first use. Its file holds the
        holder's pid, so a writer that times out can name who holds it."""
        self.ensure_dir()
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | os.O_NONBLOCK,
                         0o644)
        except OSError as exc:
            if exc.errno in _LINK_ERRNOS:
                raise _link_error(self.lock_path) from exc
            raise _storage_error("lock", self.lock_path, exc) from exc
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise StorageError(
                    f"Cannot use {self.lock_path}: it is not a regular file (remove it; "
                    "aidp recreates it); the tasklist was not changed"
                )
            self._flock(fd, fcntl.LOCK_EX)
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            except OSError:
                pass  # only the timeout message of another writer misses the pid
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
        if self.dir.is_symlink() and not self.dir.exists():
            target = os.readlink(self.dir)
            raise StorageError(
                f"Cannot create {self.dir}: it is a symbolic link to {target}, which does "
                "not exist (create that folder or remove the link); the tasklist was not "
                "changed"
            )
        self._check_linked_dir()
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _storage_error("create", self.dir, exc) from exc
        ignore = self.dir / ".gitignore"
        try:  # created once, never through a link (even a dangling one)
            fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
        except FileExistsError:
            return
        except OSError as exc:
            raise _storage_error("create", ignore, exc) from exc
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(GITIGNORE)
        except OSError as exc:
            raise _storage_error("write", ignore, exc) from exc

    def _flock(self, fd: int, mode: int) -> None:
        """Take the lock; if another process holds it, wait at most `lock_timeout`
        seconds, telling `on_wait` after a moment. A holder that dies releases it."""
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        import threading  # only when contended: kept off start-up

        if threading.current_thread() is threading.main_thread():
            self._wait_blocking(fd, mode)
        else:
            self._wait_polling(fd, mode)

    def _wait_blocking(self, fd: int, mode: int) -> None:
        """A blocking flock (the kernel wakes us when the holder lets go), cut short by
        a timer signal: at the notice, then at the deadline."""
        import signal

        def ring(_signum: int, _frame: object) -> None:
            raise _Alarm

        started = time.monotonic()
        told = self.on_wait is None
        previous = signal.signal(signal.SIGALRM, ring)
        try:
            while True:
                waited = time.monotonic() - started
                if waited >= self.lock_timeout:
                    raise self._timeout_error(self.lock_timeout)
                step = self.lock_timeout - waited
                if not told:
                    step = min(step, max(LOCK_NOTICE_SECONDS - waited, 0.001))
                try:
                    signal.setitimer(signal.ITIMER_REAL, step)
                    fcntl.flock(fd, mode)
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    return
                except _Alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    try:  # the alarm may have rung just after the lock was taken
                        fcntl.flock(fd, mode | fcntl.LOCK_NB)
                        return
                    except BlockingIOError:
                        pass
                if not told and time.monotonic() - started >= LOCK_NOTICE_SECONDS:
                    told = True
                    assert self.on_wait is not None
                    self.on_wait(self.lock_path)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def _wait_polling(self, fd: int, mode: int) -> None:
        """Outside the main thread no signal can cut a wait short: try every few ms."""
        started = time.monotonic()
        told = self.on_wait is None
        while True:
            waited = time.monotonic() - started
            if waited >= self.lock_timeout:
                raise self._timeout_error(self.lock_timeout)
            if not told and waited >= LOCK_NOTICE_SECONDS:
                told = True
                assert self.on_wait is not None
                self.on_wait(self.lock_path)
            time.sleep(0.005)
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                continue

    def _timeout_error(self, timeout: float) -> StorageError:
        holder = ""
        try:
            pid = int(self.lock_path.read_bytes()[:32].decode("ascii").strip())
        except (OSError, ValueError, UnicodeDecodeError):
            pid = 0
        if pid > 0:
            holder = f" held by process {pid}"
        return StorageError(
            f"Timed out after {timeout:g}s waiting for the lock {self.lock_path}{holder} "
            f"(a stopped or hung aidp?); set --lock-timeout or {LOCK_TIMEOUT_ENV} to wait "
            "longer; the tasklist was not changed"
        )

    # --- writing ------------------------------------------------------------------

    def _append_locked(self, records: list[Record]) -> None:
        """One write() of whole lines; the caller holds the lock. On failure the file
        is cut back to its old length, so it is left exactly as it was."""
        if not records:
            return
        data = encode(records)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | _NOFOLLOW
                         | os.O_NONBLOCK, 0o644)
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
            vouched = read_stamp(self.dir)
            try:
                written = 0
                view = memoryview(data)
                while written < len(data):
                    written += os.write(fd, view[written:])
                if os.environ.get(FSYNC_ENV, "") not in ("", "0"):
                    os.fsync(fd)
            except OSError as exc:
                os.ftruncate(fd, size)
                raise _storage_error("write", self.path, exc) from exc
            if vouched is not None and vouched[1] == stat_key(info):
                self._vouch_append(fd, info, size + len(data), vouched[0])
        finally:
            os.close(fd)

    def _vouch_append(self, fd: int, before: os.stat_result, size: int, nonce: bytes) -> None:
        """The cache knew the file as it was before this append: tell it the file now is
        that file plus whole lines, so the next read need not re-read the prefix.

        The modification time is set to a fine-grained value of our own first: any
        later change by another program sets it to the clock's time again, which cannot
        be that value, so equal stat data really means an unchanged file even where
        timestamps are coarse (where they are too coarse to keep it, nothing is vouched
        and the next read checks the contents)."""
        mark = time.time_ns() | 1
        try:
            os.utime(fd, ns=(before.st_atime_ns, mark))
            after = os.fstat(fd)
        except OSError:
            return  # not the owner, say: the next read checks the contents instead
        if after.st_mtime_ns == mark and after.st_size == size:
            write_stamp(self.dir, nonce, stat_key(after))

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
        if _reader is not None:
            # Bring the cache up to date first, outside the lock: a rebuild (a fresh
            # clone, a checkout) must not make every other writer wait for it.
            _reader.warm(self)
        with self.locked():
            fold = self._fold_current()
            records = change(fold)
            self._append_locked(records)
            return records

    def replace_locked(self, data: bytes) -> None:
        """Atomically replace the file (temp file, fsync, rename); the caller holds the lock."""
        self._replace_with(lambda handle: handle.write(data))

    def _replace_with(self, write: Callable[[Any], object]) -> None:
        """Atomically replace the file with what `write(handle)` writes to a temp file
        (fsynced, then renamed over it); the caller holds the lock."""
        try:
            import tempfile  # only repair and compact need it: kept off start-up

            fd, temp = tempfile.mkstemp(prefix=LOG_NAME + ".", suffix=".tmp", dir=self.dir)
        except OSError as exc:
            raise _storage_error("write", self.path, exc) from exc
        try:
            with os.fdopen(fd, "wb") as handle:
                write(handle)
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.chmod(temp, os.stat(self.path).st_mode & 0o777)
            except OSError:
                pass  # no old file to copy the mode from: the default stays
            os.replace(temp, self.path)
        except BaseException as exc:
            try:
                os.unlink(temp)
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise _storage_error("write", self.path, exc) from exc
            raise
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
    #
    # Both stream the file (a few MB at a time), so memory does not grow with its size
    # beyond what the fold itself keeps (compact: one winner per id).

    def _backup_locked(self) -> Path:
        from aidp.model import format_ts, now_micros

        folder = self.dir / "backups"
        stamp = format_ts(now_micros()).replace(":", "").replace(".", "-")
        target = folder / f"{LOG_NAME}.{stamp}.bak"
        _refuse_link(folder)
        try:
            folder.mkdir(exist_ok=True)
            with open(self.path, "rb") as source, open(target, "wb") as copy:
                import shutil  # only maintenance needs it

                shutil.copyfileobj(source, copy, _STREAM)
        except OSError as exc:
            try:
                target.unlink()  # a half-written backup would only mislead
            except OSError:
                pass
            raise _storage_error("write the backup", target, exc) from exc
        return target

    def _stream(self) -> Iterator[bytes]:
        """The file's lines (without newlines), read a few MB at a time."""
        self._require_regular()
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - closed below, generator
        except FileNotFoundError:
            return
        except OSError as exc:
            raise _storage_error("read", self.path, exc) from exc
        with handle:
            carry = b""
            while True:
                try:
                    block = handle.read(_STREAM)
                except OSError as exc:
                    raise _storage_error("read", self.path, exc) from exc
                if not block:
                    break
                parts = (carry + block).split(b"\n")
                carry = parts.pop()
                yield from parts
            if carry:
                yield carry

    def repair(self, *, dry_run: bool = False) -> MaintenanceReport:
        """Rewrite the file without its damaged lines, keeping a backup of the old one."""
        if not self.path.exists():
            self._check_root()
            return MaintenanceReport()  # nothing to repair, and nothing is created
        with self.locked() if not dry_run else nullcontext():
            if not dry_run:
                _refuse_link(self.path)
            report = MaintenanceReport()
            for number, raw in enumerate(self._stream(), start=1):
                report.lines_before += 1
                record = parse_line(raw)
                if record is None and not raw.strip():
                    report.blank += 1
                elif record is None or place(record)[0] == DAMAGED:
                    report.damaged_lines.append(number)
            report.lines_after = report.lines_before - report.blank - len(report.damaged_lines)
            if dry_run or (not report.damaged_lines and not report.blank):
                return report
            report.backup = self._backup_locked()

            def write(handle: Any) -> None:
                for raw in self._stream():
                    record = parse_line(raw)
                    if record is not None and place(record)[0] != DAMAGED:
                        handle.write(raw + b"\n")

            self._replace_with(write)
            report.rewritten = True
            return report

    def compact(self) -> MaintenanceReport:
        """Keep only the winning record per id (history stays in git and the backup).
        Typed records without an id (kinds a newer version writes) cannot be folded
        and are all kept, in place."""
        if not self.path.exists():
            self._check_root()
            return MaintenanceReport()  # nothing to compact, and nothing is created
        with self.locked():
            _refuse_link(self.path)
            report = MaintenanceReport()
            winners: dict[tuple[str, str], FoldKey] = {}
            unknown: list[int] = []
            changed = False  # blank, damaged or superseded lines, or a line to clean up
            for number, raw in enumerate(self._stream(), start=1):
                report.lines_before = number
                record = parse_line(raw)
                if record is None:
                    changed = True
                    report.damaged += bool(raw.strip())
                    continue
                kind, rid = place(record)
                if kind == IGNORED:
                    unknown.append(number)
                elif kind == DAMAGED:
                    report.damaged += 1
                    changed = True
                else:
                    key = key_of(record, number)
                    previous = winners.get((kind, rid))
                    if beats(key, previous):
                        winners[(kind, rid)] = key
                    changed = changed or previous is not None
                if raw != raw.strip() or raw.startswith(_BOM):
                    changed = True
            keep = {key[1] for key in winners.values()}
            keep.update(unknown)
            del winners
            report.lines_after = len(keep)
            report.unknown = len(unknown)
            if not changed:
                return report
            report.backup = self._backup_locked()

            def write(handle: Any) -> None:
                for number, raw in enumerate(self._stream(), start=1):
                    if number in keep:
                        handle.write(raw.removeprefix(_BOM).strip() + b"\n")

            self._replace_with(write)
            report.rewritten = True
            return report


class MaintenanceReport(_Plain):
    _fields = ("lines_before", "lines_after", "blank", "damaged", "damaged_lines", "backup",
               "rewritten", "unknown")

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


def _lines(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)


def parse_lock_timeout(value: str | None, *, what: str = "--lock-timeout") -> float:
    """Seconds a writer waits for the lock: a number ≥ 0 (0: do not wait)."""
    if value is None or not value.strip():
        return DEFAULT_LOCK_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < 10**9:  # also refuses nan and inf
        from aidp.errors import InvalidInput

        raise InvalidInput(
            f"Invalid {what} {value!r}: use a number of seconds ≥ 0 (0: do not wait)"
        )
    return seconds


# --- the stamp: which stat data the cache may trust ---------------------------------------
#
# The snapshot (aidp.index) covers a prefix of the log. It may be trusted without
# reading that prefix again only when the log's stat data equals data that was
# *vouched for*: recorded after the prefix was verified against the file's contents, or
# by an aidp writer that appended whole lines to such a file. Anything else — another
# inode (even one whose number was reused), a size, mtime or ctime of any other value —
# means the prefix is checked in full before it is used.

_STAMP = struct.Struct("<8s8sQQqqqI")  # magic, snapshot nonce, dev, ino, size, mtime, ctime, crc
_STAMP_MAGIC = b"aidpstmp"

StatKey = tuple[int, int, int, int, int]


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def read_stamp(folder: Path) -> tuple[bytes, StatKey] | None:
    """(snapshot nonce, vouched stat data), or None when there is no whole stamp."""
    try:
        fd = os.open(folder / CACHE_DIR / STAMP_NAME, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None  # a fifo or a device must never be read (it could block)
        data = os.pread(fd, _STAMP.size + 1, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) != _STAMP.size:
        return None
    magic, nonce, *key, crc = _STAMP.unpack(data)
    if magic != _STAMP_MAGIC or zlib.crc32(data[: _STAMP.size - 4]) != crc:
        return None
    return nonce, tuple(key)  # type: ignore[return-value]


def write_stamp(folder: Path, nonce: bytes, key: StatKey) -> None:
    """Record `key` as vouched for the snapshot `nonce`. Best effort: without a stamp
    the next read checks the contents, never answers wrong."""
    body = _STAMP.pack(_STAMP_MAGIC, nonce, *key, 0)[: _STAMP.size - 4]
    data = body + struct.pack("<I", zlib.crc32(body))
    path = folder / CACHE_DIR / STAMP_NAME
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | _NOFOLLOW, 0o644)
    except OSError:
        return
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.pwrite(fd, data, 0)  # one small write: whole or, if torn, failing its crc
    except OSError:
        pass
    finally:
        os.close(fd)


def forget_stamp(folder: Path) -> None:
    try:
        os.unlink(folder / CACHE_DIR / STAMP_NAME)
    except OSError:
        pass
