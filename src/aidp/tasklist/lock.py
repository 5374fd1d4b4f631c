"""Waiting for the write lock: a bounded wait that names who holds it.

A writer takes an exclusive `flock` on `.aidp/tasklist.jsonl.lock` and writes its pid
into it. Another writer waits at most `--lock-timeout` seconds (`AIDP_LOCK_TIMEOUT`,
default 30) and then fails naming that pid; readers never take the lock. Also the
short, bounded flocks of the read cache (`flock_within`), the turn of one process at a
time at a long task (`turn`: the store's build), and the descriptors SQLite's `fcntl`
locks need kept open (`Lease`).
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

from aidp.core.errors import StorageError
from aidp.tasklist.files import NOFOLLOW, open_file, remove_irregular, storage_error

if TYPE_CHECKING:
    from pathlib import Path


class Writer(Protocol):
    """What the lock asks of the writer taking it (`aidp.tasklist.log.TaskLog` is one):
    its lock file, how long it waits, and whom it tells that it waits."""

    @property
    def dir(self) -> Path: ...  # the folder of the lock file

    @property
    def lock_path(self) -> Path: ...

    @property
    def lock_timeout(self) -> float: ...

    @property
    def on_wait(self) -> Callable[[Path], None] | None: ...

LOCK_NOTICE_SECONDS = 1.0
# A writer waits at most this long for another writer's lock (--lock-timeout,
# AIDP_LOCK_TIMEOUT): a stopped or hung holder must not hang every command forever.
DEFAULT_LOCK_TIMEOUT = 30.0
LOCK_TIMEOUT_ENV = "AIDP_LOCK_TIMEOUT"


class _Alarm(Exception):
    """The timer that bounds a lock wait rang."""


def parse_lock_timeout(value: str | None, *, what: str = "--lock-timeout") -> float:
    """Seconds a writer waits for the lock: a number ≥ 0 (0: do not wait)."""
    if value is None or not value.strip():
        return DEFAULT_LOCK_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < 10**9:  # also refuses nan and inf
        from aidp.core.errors import InvalidInput

        raise InvalidInput(
            f"Invalid {what} {value!r}: use a number of seconds ≥ 0 (0: do not wait)"
        )
    return seconds


def flock_within(fd: int, how: int, seconds: float, *, step: float = 0.002) -> bool:
    """Take the flock `how` within `seconds`, trying every `step` seconds (polling, in
    any thread: for locks held for moments, as the store's and its stamp's are), or not
    at all."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(step)


def trade(fd: int, how: int, seconds: float) -> bool:
    """The flock held on `fd` traded for `how` within `seconds` (let go first: flock
    has no atomic upgrade), or none at all."""
    fcntl.flock(fd, fcntl.LOCK_UN)
    return flock_within(fd, how, seconds)


def turn(folder: Path, name: str, seconds: float) -> int | None:
    """A descriptor of the lock file `folder/name` holding its exclusive flock: one
    process at a time at a long task (the store's build), had within `seconds` (0: only
    if free now; tried every 50 ms: such a turn lasts seconds). None: held elsewhere all
    that time, or no lock file can be had there. Closing every descriptor of it (the
    holder's, and a child's that inherited it) ends the turn; so does the holder's death."""
    try:  # a link or a fifo put in its place is removed; the lock file itself never is
        remove_irregular([folder / name])
        fd = open_file(folder, name, os.O_RDWR | os.O_CREAT)
    except (OSError, StorageError):
        return None
    if flock_within(fd, fcntl.LOCK_EX, seconds, step=0.05):
        return fd
    os.close(fd)
    return None


def writer_active(lock_path: Path) -> bool:
    """Whether another process holds the write lock right now (a probe: this never
    waits and holds nothing afterwards)."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_NONBLOCK | NOFOLLOW)
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
def held(log: Writer, folder: Path | None = None, name: str | None = None) -> Iterator[None]:
    """The exclusive write lock on `log.lock_path` (its folder exists), or on the file
    `name` in `folder` (the repository's lock all its worktrees share: aidp.tasklist.worktrees);
    the file holds the holder's pid, so a writer that times out can name who holds it."""
    base, name = (log.dir, log.lock_path.name) if folder is None or name is None else (
        folder, name)
    try:  # never through a link, never a FIFO or device (aidp.tasklist.files)
        fd = open_file(base, name, os.O_RDWR | os.O_CREAT)
    except OSError as exc:
        raise storage_error("lock", base / name, exc) from exc
    try:
        take(log, fd, fcntl.LOCK_EX, base / name)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass  # only the timeout message of another writer misses the pid
        yield
    finally:
        os.close(fd)  # closing releases the lock; a killed holder releases it too


def take(log: Writer, fd: int, mode: int, path: Path | None = None) -> None:
    """Take the lock (the file `path`, default `log.lock_path`); if another process
    holds it, wait at most `lock_timeout` seconds, telling `on_wait` after a moment. A
    holder that dies releases it."""
    path = log.lock_path if path is None else path
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    import threading  # only when contended: kept off start-up

    if threading.current_thread() is threading.main_thread():
        _wait_blocking(log, fd, mode, path)
    else:
        _wait_polling(log, fd, mode, path)

def _wait_blocking(log: Writer, fd: int, mode: int, path: Path) -> None:
    """A blocking flock (the kernel wakes us when the holder lets go), cut short by
    a timer signal: at the notice, then at the deadline."""
    import signal

    def ring(_signum: int, _frame: object) -> None:
        raise _Alarm

    started = time.monotonic()
    told = log.on_wait is None
    previous = signal.signal(signal.SIGALRM, ring)
    try:
        while True:
            waited = time.monotonic() - started
            if waited >= log.lock_timeout:
                raise _timeout_error(log, log.lock_timeout, path)
            step = log.lock_timeout - waited
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
                assert log.on_wait is not None
                log.on_wait(path)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

def _wait_polling(log: Writer, fd: int, mode: int, path: Path) -> None:
    """Outside the main thread no signal can cut a wait short: try every few ms."""
    started = time.monotonic()
    told = log.on_wait is None
    while True:
        waited = time.monotonic() - started
        if waited >= log.lock_timeout:
            raise _timeout_error(log, log.lock_timeout, path)
        if not told and waited >= LOCK_NOTICE_SECONDS:
            told = True
            assert log.on_wait is not None
            log.on_wait(path)
        time.sleep(0.005)
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            continue

def _timeout_error(log: Writer, timeout: float, path: Path) -> StorageError:
    holder = ""
    try:
        pid = int(path.read_bytes()[:32].decode("ascii").strip())
    except (OSError, ValueError, UnicodeDecodeError):
        pid = 0
    if pid > 0:
        holder = f" held by process {pid}"
    return StorageError(
        f"Timed out after {timeout:g}s waiting for the lock {path}{holder} "
        f"(a stopped or hung aidp?); set --lock-timeout or {LOCK_TIMEOUT_ENV} to wait "
        "longer; the tasklist was not changed"
    )


# --- SQLite files: descriptors that must outlive every connection of the process ---


class Lease:
    """A descriptor of a SQLite database (aidp.store's) held for this process's
    connections to it. SQLite locks with POSIX `fcntl` locks, which the kernel drops
    for the whole process when ANY descriptor of the file is closed: a descriptor of
    ours (for the flock, fstat, utime) closed while a connection of this process reads
    or writes the file would let another process write under that read or transaction
    (a torn view; dirty pages of ours over theirs). So a lease's descriptor is closed
    only once no lease on the same file is held in this process (as SQLite does with
    its own); until then it waits, idle, and the next lease on that file reuses it."""

    def __init__(self, fd: int) -> None:
        self.fd, self.ended = fd, False
        st = os.fstat(fd)
        self.key = (st.st_dev, st.st_ino)
        _HELD[self.key] = _HELD.get(self.key, 0) + 1

    def end(self) -> None:
        """Given back (once; later calls do nothing): closed, with every idle one of its
        file, if no other lease of it is held."""
        if self.ended:
            return
        self.ended = True
        fcntl.flock(self.fd, fcntl.LOCK_UN)  # idle: free for the next lease
        idle = _IDLE.setdefault(self.key, [])
        idle.append(self.fd)
        _HELD[self.key] -= 1
        if _HELD[self.key] == 0:
            del _HELD[self.key], _IDLE[self.key]
            for fd in idle:
                os.close(fd)


_HELD: dict[tuple[int, int], int] = {}  # (dev, ino) -> leases held
_IDLE: dict[tuple[int, int], list[int]] = {}  # descriptors given back, not yet closed


def lease(path: Path) -> Lease:
    """A lease on the database at `path` (FileNotFoundError: none there), an idle
    descriptor of the same file reused (its flock free: given back unlocked)."""
    st = os.lstat(path)
    idle = _IDLE.get((st.st_dev, st.st_ino))
    if idle and stat.S_ISREG(st.st_mode):
        return Lease(idle.pop())
    return Lease(os.open(path, os.O_RDONLY | os.O_NONBLOCK | NOFOLLOW))
