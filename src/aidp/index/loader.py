"""`load`: the folded state of a log, from its snapshot brought up to date.

The contract: every answer equals a plain fold of the file as it is now. So the
snapshot's prefix is used without reading it again only when the log's stat data
(device, inode, size, mtime, ctime) equals data vouched for in the stamp — after a
check of the contents, or by an aidp writer that appended to such a file (see
`aidp.log.read_stamp`). Anything else, including another file that reuses the inode
number (git checkout on ext4), is checked in full: crc32 of the prefix, about 0.1 s
per 100 MB. A failed check means a rebuild. Lines after the prefix are folded on top
on every read; once they pass `_rebuild_tail` bytes the next snapshot is written from
this one (`delta._Delta`): only the sections holding a task those lines name are
merged, the others are copied, so that costs what the new lines touch, not the
history. A section that fails its checksum is rebuilt from the log's prefix.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aidp.errors import StorageError
from aidp.fold import Fold
from aidp.index.columns import Base, Changed
from aidp.index.lazy import LazyTasks, _no_gc
from aidp.index.mapping import LazyKeys
from aidp.index.reader import LogFile
from aidp.index.snapshot import SNAPSHOT_NAME, open_snapshot, read_head, write_snapshot
from aidp.stamp import CACHE_DIR, read_stamp, stat_key, write_stamp

if TYPE_CHECKING:
    from collections.abc import Callable

    from aidp.index.snapshot import SnapshotFile
    from aidp.log import TaskLog

# Below this size a full fold costs less than loading and checking a snapshot.
MIN_BYTES = 32 * 1024
# Write the next snapshot once this many bytes were appended after it, or more for a
# big log (see _rebuild_tail): every read folds the tail.
REBUILD_TAIL = 64 * 1024
# Stat data read this close to the file's last change may hide a later change in the
# same timestamp tick: a reader vouches only for data older than this.
RACY_NS = 2_000_000_000
# Tests set this: a bug in the snapshot path must fail them, not fall back silently.
STRICT = False


def load(log: TaskLog, *, whole_lines: bool = False) -> Fold:
    """The folded state of `log`, the same as `log.full_fold(whole_lines=…)`.
    `whole_lines`: leave out a last line without its newline (a write in progress)."""
    try:
        fd = os.open(log.path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return log.full_fold(whole_lines=whole_lines)  # missing: empty; else its error
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        return log.full_fold(whole_lines=whole_lines)
    if st.st_size < max(MIN_BYTES, 1) or not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return log.full_fold(whole_lines=whole_lines)
    file = _OwnedFile(fd, st.st_size)  # closed when the last task decoded from it is
    loader = _Loader(log, file, st, whole_lines=whole_lines)
    try:
        return loader.load()
    except Exception:
        if STRICT:
            raise
        return log.full_fold(whole_lines=whole_lines)
    finally:
        # The fold keeps the loader (to rebuild a damaged section) and the log keeps
        # the fold (TaskLog's memo): without this the cycle would hold the open
        # descriptors until a garbage collection.
        loader.log = None


def warm(log: TaskLog) -> None:
    """Bring the snapshot up to date unless it is (a stamp vouching for the log as it
    is, over a snapshot that covers all but a short tail). Cheap when it is."""
    try:
        st = os.stat(log.path)
    except OSError:
        return
    if st.st_size < max(MIN_BYTES, 1) or not stat.S_ISREG(st.st_mode):
        return
    stamp = read_stamp(log.dir)
    head = read_head(str(log.dir / CACHE_DIR / SNAPSHOT_NAME))
    if (stamp is not None and head is not None and stamp == (head[0], stat_key(st))
            and st.st_size - head[1] < _rebuild_tail(head[1])):
        return
    load(log)


class _OwnedFile(LogFile):
    def __del__(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


class _LogPaths:
    """Where a log and its folder are: what writing a snapshot needs of a TaskLog."""

    def __init__(self, log: TaskLog) -> None:
        self.path, self.dir = log.path, log.dir


def fallback_home(log: TaskLog | _LogPaths) -> Path:
    """Where the snapshot goes when `.aidp/cache` cannot be written: a folder of the
    user's cache (XDG_CACHE_HOME, else ~/.cache) named after the tasklist's real path.
    Two projects that share a name (crc collision) only rebuild more often: every
    snapshot is checked against the file it is used for."""
    import zlib

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                            ".cache")
    real = os.path.realpath(log.path).encode("utf-8", "surrogateescape")
    key = f"{zlib.crc32(real):08x}{zlib.adler32(real):08x}"
    return Path(base) / "aidp" / key


def _rebuild_tail(covered: int) -> int:
    """How much may be appended before the next snapshot is written. Reads pay for the
    tail line by line (and an id bucket per task it names); the next snapshot costs
    the sections it touches, which grow with the log: so the tail grows like the square
    root of the log, 64 KB up to 250 MB of log, ~70 KB at 1M events, ~155 KB at 5M."""
    import math

    return max(REBUILD_TAIL, math.isqrt(covered) * 4)


class _SnapshotFold(Fold):
    """A fold whose typed records (work queue, TODO lists) come from the snapshot's
    `typed` section on first use: commands that never look at them (stats, list, done)
    do not read it."""

    def __init__(self, base: Base, **fields: Any) -> None:
        super().__init__(**fields)
        del self.typed, self.typed_keys  # see __getattr__
        self._base = base

    def kept_queue_state(self) -> tuple[Any, ...] | None:
        """The work queue's state kept in the snapshot (queue.state reads it), while
        the typed records are the snapshot's own: None once anything touched them (the
        lines after the snapshot had typed records, or a caller asked for them)."""
        if "typed" in self.__dict__:
            return None
        return self._base.queue_fields()

    def kept_queue_keys(self) -> tuple[dict[str, bytes], dict[str, bytes]] | None:
        """The queue keys `tasks list --json` adds, encoded in the snapshot, under the
        same condition as kept_queue_state."""
        if "typed" in self.__dict__:
            return None
        return self._base.queue_keys()

    def __getattr__(self, name: str) -> Any:
        # Called only while `typed`/`typed_keys` are not set yet.
        if name in ("typed", "typed_keys"):
            self.typed, self.typed_keys = self._base.typed_pair()
            return self.__dict__[name]
        raise AttributeError(name)


class _Loader:
    def __init__(self, log: TaskLog, file: LogFile, st: os.stat_result, *,
                 whole_lines: bool) -> None:
        self.log: TaskLog | None = log  # cleared once loaded (see load())
        self.paths = _LogPaths(log)
        self.file, self.st = file, st
        self.whole_lines = whole_lines
        self.trusted = False  # the prefix was trusted on vouched stat data
        # Where the snapshot and stamp live: .aidp/, or a fallback under the user's
        # cache folder when .aidp/cache cannot be written (a read-only checkout).
        self.home = log.dir

    def load(self) -> Fold:
        snap = open_snapshot(str(self.home / CACHE_DIR / SNAPSHOT_NAME))
        if snap is None:
            fallback = fallback_home(self.paths)
            snap = open_snapshot(str(fallback / CACHE_DIR / SNAPSHOT_NAME))
            if snap is not None:
                self.home = fallback
        if snap is None or not self._valid(snap):
            return self._rebuild()
        offset, crc = snap.offset, snap.crc
        try:
            base = Base(snap.section, self._recover(offset, crc))
        except StorageError:
            return self._rebuild()  # its meta is damaged: nothing was read from it
        end = self.file.last_newline_end()
        if end - offset >= _rebuild_tail(offset):
            # The next snapshot: the sections the new lines touch are merged, the
            # others copied; a cost that follows the new lines, not the history.
            from aidp.index.delta import _Delta  # writing only: reads never import it

            delta = _Delta(base)
            with _no_gc():
                crc = delta.feed_file(self.file.fd, offset, end, crc)
                sections = delta.merged(snap)
            del delta
            if sections is None:
                return self._full()
            if self._save(sections, end, crc):
                del sections
                fresh = self._reopen(end, crc)
                if fresh is not None:
                    base, offset = fresh, end
        return self._fold(base, offset)

    def _full(self) -> Fold:
        assert self.log is not None
        return self.log.full_fold(whole_lines=self.whole_lines)

    def _recover(self, offset: int, crc: int) -> Callable[[int | None], Callable[[str], bytes]]:
        """What a `Base` calls when a section fails its check: the sections rebuilt from
        the log's prefix (and saved, so the next read need not)."""

        def recover(buckets: int | None) -> Callable[[str], bytes]:
            from aidp.index.build import _Builder, materialize

            builder = _Builder()
            with _no_gc():
                if builder.feed_file(self.file.fd, 0, offset, 0) != crc:
                    raise Changed("the tasklist changed while it was read")
                sections = builder.sections(buckets)
            del builder
            if sections is None:
                raise Changed("the snapshot cannot hold this tasklist")
            if self._save(sections, offset, crc):
                fresh = open_snapshot(str(self.home / CACHE_DIR / SNAPSHOT_NAME))
                if fresh is not None and (fresh.offset, fresh.crc) == (offset, crc):
                    return fresh.section
            return materialize(sections)

        return recover

    def _valid(self, snap: SnapshotFile) -> bool:
        """Whether the snapshot describes this file's prefix: on vouched stat data
        without reading it, else by checking it in full."""
        if not 0 < snap.offset <= self.file.size:
            return False
        if read_stamp(self.home) == (snap.nonce, stat_key(self.st)):
            self.trusted = True
            return True
        if self.file.read(snap.offset - 1, snap.offset) != b"\n":
            return False
        if self.file.crc(snap.offset) != snap.crc:
            return False
        self._vouch(snap.nonce)
        return True

    def _rebuild(self) -> Fold:
        end = self.file.last_newline_end()
        if end == 0:
            return self._full()
        from aidp.index.build import _Builder, materialize

        builder = _Builder()
        with _no_gc():
            crc = builder.feed_file(self.file.fd, 0, end, 0)
            sections = builder.sections()
        del builder  # before the snapshot is written: peak memory is what matters here
        if sections is None:
            return self._full()
        if self._save(sections, end, crc):
            del sections
            base = self._reopen(end, crc)
            if base is not None:
                return self._fold(base, end)
            return self._full()  # replaced meanwhile
        return self._fold(Base(materialize(sections), self._recover(end, crc)), end)

    def _reopen(self, offset: int, crc: int) -> Base | None:
        """The snapshot just written, read like any other (None: replaced meanwhile)."""
        fresh = open_snapshot(str(self.home / CACHE_DIR / SNAPSHOT_NAME))
        if fresh is None or (fresh.offset, fresh.crc) != (offset, crc):
            return None
        return Base(fresh.section, self._recover(offset, crc))

    def _fold(self, base: Base, offset: int) -> Fold:
        fold = _SnapshotFold(
            base,
            tasks=LazyTasks(base, self.file),
            task_keys=LazyKeys(base),
            damaged=base.damaged,
            lines=base.lines,
            ends_with_newline=True,
        )
        stop = self.file.last_newline_end() if self.whole_lines else self.file.size
        if stop > offset:  # the lines after the snapshot, a torn last one too
            fold.feed(self.file.read(offset, stop))
        return fold

    def _save(self, sections: list[tuple[str, Any]], offset: int, crc: int) -> bool:
        """Write the snapshot (and vouch for it); whether it was written."""
        nonce = write_snapshot(self.home, offset, crc, sections)
        if nonce is None and self.home == self.paths.dir:
            # .aidp/cache cannot be written (a read-only checkout, a file in the way):
            # keep the snapshot in the user's cache folder instead of rebuilding it on
            # every read.
            self.home = fallback_home(self.paths)
            try:
                self.home.mkdir(parents=True, exist_ok=True)
            except OSError:
                return False
            nonce = write_snapshot(self.home, offset, crc, sections)
        if nonce is None:
            return False
        self._vouch(nonce)
        return True

    def _vouch(self, nonce: bytes) -> None:
        """Record the stat data this load read the file under as holding the snapshot's
        prefix — if the file did not change meanwhile, and its last change is not so
        recent that a same-tick change could still hide behind equal stat data (or
        the data was vouched already)."""
        try:
            now = os.fstat(self.file.fd)
        except OSError:
            return
        if stat_key(now) != stat_key(self.st):
            return
        recent = time.time_ns() - max(now.st_mtime_ns, now.st_ctime_ns) < RACY_NS
        if self.trusted or not recent:
            write_stamp(self.home, nonce, stat_key(now))
