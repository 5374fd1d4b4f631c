"""`load`: the folded state of a log, from its snapshot brought up to date.

The contract: every answer equals a plain fold of the file as it is now. So the
snapshot's prefix is used without reading it again only when the log's stat data
(device, inode, size, mtime, ctime) equals data vouched for in the stamp — after a
check of the contents, or by an aidp writer that appended to such a file (see
`aidp.log.read_stamp`). Anything else, including another file that reuses the inode
number (git checkout on ext4), is checked in full: crc32 of the prefix, about 0.1 s
per 100 MB. A failed check means a rebuild. Lines after the prefix are folded on top
on every read; once they pass `_rebuild_tail` bytes the snapshot is rewritten.
"""

from __future__ import annotations

import marshal
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from aidp.fold import Fold
from aidp.index.columns import _Builder, _Columns
from aidp.index.lazy import LazyKeys, LazyTasks, _no_gc
from aidp.index.reader import LogFile
from aidp.index.snapshot import SNAPSHOT_NAME, read_head, read_snapshot, write_snapshot
from aidp.stamp import CACHE_DIR, read_stamp, stat_key, write_stamp

if TYPE_CHECKING:
    from aidp.index.snapshot import Snapshot
    from aidp.log import TaskLog

# Below this size a full fold costs less than loading and checking a snapshot.
MIN_BYTES = 32 * 1024
# Rewrite the snapshot once this many bytes were appended after it, or more for a big
# log (see _rebuild_tail): every read folds the tail; a rewrite costs the whole snapshot.
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
    try:
        return _Loader(log, file, st, whole_lines=whole_lines).load()
    except Exception:
        if STRICT:
            raise
        return log.full_fold(whole_lines=whole_lines)


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


def fallback_home(log: TaskLog) -> Path:
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
    """How much may be appended before the snapshot is rewritten. Reads pay for the
    tail line by line and a rewrite costs about the whole snapshot, so the amortised
    cost is lowest with a tail growing like the square root of the log: 64 KB at
    100k events (30 MB), ~200 KB at 1M."""
    import math

    return max(REBUILD_TAIL, math.isqrt(covered) * 12)


class _Loader:
    def __init__(self, log: TaskLog, file: LogFile, st: os.stat_result, *,
                 whole_lines: bool) -> None:
        self.log, self.file, self.st = log, file, st
        self.whole_lines = whole_lines
        self.trusted = False  # the prefix was trusted on vouched stat data
        # Where the snapshot and stamp live: .aidp/, or a fallback under the user's
        # cache folder when .aidp/cache cannot be written (a read-only checkout).
        self.home = log.dir

    def load(self) -> Fold:
        snap = read_snapshot(str(self.home / CACHE_DIR / SNAPSHOT_NAME))
        if snap is None:
            fallback = fallback_home(self.log)
            snap = read_snapshot(str(fallback / CACHE_DIR / SNAPSHOT_NAME))
            if snap is not None:
                self.home = fallback
        if snap is None or not self._valid(snap):
            return self._rebuild()
        cols = _Columns(marshal.loads(snap.body))
        offset, crc = snap.offset, snap.crc
        del snap  # its bytes: as big as the columns again
        end = self.file.last_newline_end()
        if end - offset >= _rebuild_tail(offset):
            with _no_gc():
                builder = _Builder.from_columns(cols)
                crc = builder.feed_file(self.file.fd, offset, end, crc)
            fresh = builder.columns()
            del builder, cols
            if fresh is None:
                return self.log.full_fold(whole_lines=self.whole_lines)
            self._save(fresh, end, crc)
            cols, offset = fresh, end
        return self._fold(cols, offset)

    def _valid(self, snap: Snapshot) -> bool:
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
            return self.log.full_fold(whole_lines=self.whole_lines)
        builder = _Builder()
        with _no_gc():
            crc = builder.feed_file(self.file.fd, 0, end, 0)
        cols = builder.columns()
        del builder  # before the snapshot is serialised: peak memory is what matters here
        if cols is None:
            return self.log.full_fold(whole_lines=self.whole_lines)
        self._save(cols, end, crc)
        return self._fold(cols, end)

    def _fold(self, cols: _Columns, offset: int) -> Fold:
        fold = Fold(
            tasks=LazyTasks(cols, self.file),  # type: ignore[arg-type]
            typed=cols.typed,
            task_keys=LazyKeys(cols),  # type: ignore[arg-type]
            typed_keys=cols.typed_keys,
            damaged=cols.damaged,
            lines=cols.lines,
            ends_with_newline=True,
        )
        stop = self.file.last_newline_end() if self.whole_lines else self.file.size
        if stop > offset:  # the lines after the snapshot, a torn last one too
            fold.feed(self.file.read(offset, stop))
        return fold

    def _save(self, cols: _Columns, offset: int, crc: int) -> None:
        body = marshal.dumps(cols.body())
        nonce = write_snapshot(self.home, offset, crc, body)
        if nonce is None and self.home == self.log.dir:
            # .aidp/cache cannot be written (a read-only checkout, a file in the way):
            # keep the snapshot in the user's cache folder instead of rebuilding it on
            # every read.
            self.home = fallback_home(self.log)
            try:
                self.home.mkdir(parents=True, exist_ok=True)
            except OSError:
                return
            nonce = write_snapshot(self.home, offset, crc, body)
        if nonce is not None:
            self._vouch(nonce)

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
