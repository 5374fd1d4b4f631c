"""The event log: `.aidp/tasklist.jsonl` — appended under a lock, read without one.

Every line is a full snapshot of one record; the state is a pure function of the
lines (`tasklist.fold`: the rule and the plain fold). This module is the file: where
it is, reading it, appending whole lines under the lock (`tasklist.lock` takes it and
bounds the wait; `tasklist.files` opens without following links); `tasklist.maintenance`
repairs and compacts it (replacing it atomically), `tasklist.stamp` tells the read cache
(`aidp.store`, the `Reader` a `TaskLog` is given: aidp.app.project) which stat data it
may trust.
"""

from __future__ import annotations

import os
import stat
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import orjson

from aidp.core.errors import StorageError
from aidp.core.model import Record
from aidp.tasklist import attributes, carry, files, lock, worktrees
from aidp.tasklist.files import storage_error
from aidp.tasklist.fold import Fold, FoldKey
from aidp.tasklist.line import folded_bytes, last_line_end, parse_line, torn_tail, well_typed_task
from aidp.tasklist.lock import (
    DEFAULT_LOCK_TIMEOUT,
    LOCK_NOTICE_SECONDS,
    LOCK_TIMEOUT_ENV,
    parse_lock_timeout,
)
from aidp.tasklist.paths import DATA_DIR, LOG_NAME
from aidp.tasklist.stamp import CACHE_DIR, STAMP_NAME, mark, read_stamp, stat_key, write_stamp

# Names other modules import from here, kept where they always were.
__all__ = [
    "CACHE_DIR", "DEFAULT_LOCK_TIMEOUT", "LOCK_NOTICE_SECONDS", "LOCK_TIMEOUT_ENV", "LOG_NAME",
    "STAMP_NAME", "Fold", "FoldKey", "Reader", "TaskLog", "dumps", "encode", "parse_line",
    "parse_lock_timeout", "read_stamp", "stat_key", "well_typed_task", "write_stamp",
]

LOCK_NAME = "tasklist.jsonl.lock"
# AIDP_FSYNC=1: every append is fsynced before the command reports success.
FSYNC_ENV = "AIDP_FSYNC"

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


def encode(records: list[Record]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


class Reader(Protocol):
    """What reads the state for `TaskLog.read` (the store: aidp.app.project hands it to
    the log it opens): the same answers as `full_fold`, faster."""

    def load(self, log: TaskLog, *, whole_lines: bool = False) -> Fold: ...

    def load_shared(self, log: TaskLog, tasklists: list[tuple[Path, bool]], *,
                    whole_lines: bool = False) -> Fold | None: ...  # None: worktrees.fold


class TaskLog:
    """One project's `.aidp/tasklist.jsonl`."""

    def __init__(
        self,
        root: Path,
        *,
        create_root: bool = True,
        on_wait: Callable[[Path], None] | None = None,
        lock_timeout: float | None = None,
        on_notice: Callable[[str], None] | None = None,
        reader: Reader | None = None,
        freeze: bool = False,
    ) -> None:
        """`create_root=False` (the CLI): a write refuses to create a missing project folder.
        `on_wait(lock_path)` is called once when a lock has been held by another process
        for LOCK_NOTICE_SECONDS, so a person knows why the command waits.
        `lock_timeout`: how long a write waits for the lock (default: AIDP_LOCK_TIMEOUT,
        else DEFAULT_LOCK_TIMEOUT seconds). `on_notice(line)` hears, once, that git
        attributes override aidp's for the tasklist (aidp.tasklist.attributes).
        `reader`: what `read` folds through (the store); None: plain folds. Dependencies
        point one way: the store builds on the log, the log knows only this protocol.
        `freeze`: a one-shot process's (the CLI's): what a read folds is frozen (no_gc)."""
        self.root = root
        self.reader = reader
        self.freeze = freeze
        self.create_root = create_root
        self.on_wait = on_wait
        if lock_timeout is None:
            lock_timeout = parse_lock_timeout(os.environ.get(LOCK_TIMEOUT_ENV),
                                              what=LOCK_TIMEOUT_ENV)
        self.lock_timeout = lock_timeout
        self.dir = root / DATA_DIR
        self.path = self.dir / LOG_NAME
        self.lock_path = self.dir / LOCK_NAME
        self._memo: tuple[tuple[Any, ...] | None, Fold] | None = None  # see _fold_current
        self._held: tuple[tuple[Any, ...], weakref.ref[Fold]] | None = None  # the same, weakly
        # `aidp init` sets this: the user asked for a tasklist here, even in a linked .aidp/.
        self.adopt_linked_dir = False
        self.on_notice = on_notice
        self._attributes = attributes.Watch(root)
        self._told: str | None = None
        self._repo: list[worktrees.Shared | None] = []  # found on first use
        # How many writes to the tasklist this log completed (appends, and the rewrites
        # of repair and compact): the CLI keeps exit 0 for a change that was saved even
        # when its report could not be printed (aidp.cli.main, Env.saved).
        self.changes = 0

    def shared(self) -> worktrees.Shared | None:
        """The git repository whose worktrees share this tasklist's queue (docs/guide.md,
        "Worktrees by hand"; aidp.tasklist.worktrees), or None outside one."""
        if not self._repo:
            self._repo.append(worktrees.find(self.root))
        return self._repo[0]

    # --- git attributes (aidp.tasklist.attributes) -------------------------------------------

    def foreign_encoding(self, head: bytes | None = None) -> str | None:
        """The encoding git checked the tasklist out in, when it is not UTF-8 (a
        repository's `working-tree-encoding`); None for UTF-8. Tells `on_notice`, once,
        of every attribute that overrides aidp's. `head`: the file's first bytes, when
        the caller has them."""
        found = self._attributes.current()
        note = found.note()
        if note is not None and note != self._told and self.on_notice is not None:
            self._told = note
            self.on_notice(note)
        if head is None:
            try:
                fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            except OSError:
                return found.encoding
            try:
                regular = stat.S_ISREG(os.fstat(fd).st_mode)
                head = os.pread(fd, attributes.SNIFF_BYTES, 0) if regular else b""
            except OSError:
                head = b""
            finally:
                os.close(fd)
        if found.encoding is None:
            # No attribute re-encodes it, so git wrote it as committed: bytes that look
            # like UTF-16 (a planted FE FF) are damage of the first line, not an encoding
            # that would hide every task and refuse every write.
            return None
        return attributes.sniff(head) or found.encoding

    def refuse_foreign_encoding(self, head: bytes | None = None) -> None:
        """A tasklist git keeps in another encoding in the work tree is never written:
        UTF-8 lines appended to it (or a rewrite) would corrupt it."""
        encoding = self.foreign_encoding(head)
        if encoding is not None:
            encoding = self._attributes.current().encoding or encoding.upper()
            raise StorageError(
                f"Cannot write {self.path}: git checks it out as {encoding} (a "
                "working-tree-encoding attribute), and aidp writes UTF-8 only; remove "
                f"that attribute and run 'git checkout -- {attributes.TASKLIST}'; the "
                "tasklist was not changed")

    # --- reading ------------------------------------------------------------------

    def require_regular(self) -> None:
        """A fifo, socket or device where the tasklist should be would hang a read or
        swallow a write: refuse it (a missing file is fine, a symlink to a file too)."""
        try:
            mode = os.stat(self.path).st_mode
        except OSError:
            return  # missing, or a dangling link: the open that follows reports it
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            raise StorageError(f"Cannot use {self.path}: it is not a regular file")

    def read_bytes(self) -> bytes:
        self.require_regular()
        try:
            with open(self.path, "rb") as handle:
                return handle.read()
        except FileNotFoundError:
            return b""
        except IsADirectoryError as exc:
            raise storage_error("read", self.path, exc) from exc
        except OSError as exc:
            raise storage_error("read", self.path, exc) from exc

    def read_lines(self) -> bytes:
        """The bytes as a fold reads them, for readers of the lines (history, `todo list
        --all`): line.folded_bytes; in a foreign encoding, as they are."""
        self.require_regular()
        return self.read_bytes() if self.foreign_encoding() is not None \
            else folded_bytes(self.path)

    def read(self) -> Fold:
        """The folded state. Never creates anything, and never waits: the file is only
        ever appended to, so a reader folds what is there. A last line without its
        newline that a writer is writing right now is left for the next read; one that
        nobody is writing is a line like any other (a record, or damage) — in this
        worktree's tasklist and in every other's alike, so all worktrees fold the same."""
        self.require_regular()
        fold = self._fold_current()
        if not fold.ends_with_newline and self.writer_active():
            fold = self._fold_current(whole_lines=True)
        return fold

    def _fold_current(self, *, whole_lines: bool = False) -> Fold:
        """The fold of the file as it is. A process that reads and then changes the log
        (every update: a check, then the change under the lock) folds it once: a fold is
        reused while the file's stat data is exactly what it was before that fold was
        made (any append changes the size; git and repair write a new inode)."""
        try:
            st = os.stat(self.path)
            key: tuple[Any, ...] | None = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                                 st.st_ctime_ns, whole_lines)
        except OSError:
            key = None
        repo = self.shared()
        lists = repo.tasklists() if repo is not None else []
        if len(lists) > 1:  # other worktrees: one live queue, folded from every file
            key = (worktrees.stat_keys([path for path, _own in lists]), lists, whole_lines)
        memo, held = self._memo, self._held
        if key is not None and memo is not None and memo[0] == key:
            return memo[1]
        if key is not None and held is not None and held[0] == key and (
                fold := held[1]()) is not None:
            return fold
        if len(lists) > 1 and memo is not None and (grown := carry.carried(memo, key, lists)):
            self._memo = (key, grown)  # what the files grew by, added: tasklist.carry
            return grown
        encoding = self.foreign_encoding()
        if len(lists) > 1 and encoding is None and self.reader is not None:
            self._memo = self._held = None
            shared = self.reader.load_shared(self, lists, whole_lines=whole_lines)
            if shared is not None:  # holds the store's write lock: kept while a caller does
                self._held = (key, weakref.ref(shared)) if key is not None else None
                return shared
        if len(lists) > 1:
            own = self.read_bytes()
            own = own if encoding is None else attributes.decode(own, encoding)
            fold = worktrees.fold(lists, own, whole_lines=whole_lines, freeze=self.freeze)
        elif encoding is not None:  # decoded, then folded plainly (no cache: rare)
            from aidp.tasklist.fields import fold_bytes

            data = attributes.decode(self.read_bytes(), encoding)
            fold = fold_bytes(data[: data.rfind(b"\n") + 1] if whole_lines else data,
                              freeze=self.freeze)
        elif self.reader is None:
            fold = self.full_fold(whole_lines=whole_lines)
        else:
            fold = self.reader.load(self, whole_lines=whole_lines)
        self._memo = (key, fold) if key is not None else None
        return fold

    def full_fold(self, *, whole_lines: bool = False) -> Fold:
        """The plain fold of the file, read a block at a time (fields.fold_file)."""
        from aidp.tasklist.fields import fold_file

        self.require_regular()
        try:
            with open(self.path, "rb", buffering=0) as handle:
                fd, size = handle.fileno(), os.fstat(handle.fileno()).st_size
                end = last_line_end(fd, size)  # the file now, or a prefix of it
                return fold_file(fd, end, b"" if whole_lines else torn_tail(fd, end, size),
                                 freeze=self.freeze)
        except FileNotFoundError:
            return Fold()
        except OSError as exc:
            raise storage_error("read", self.path, exc) from exc

    def scan(self) -> Iterator[tuple[int, bytes, Record | None]]:
        """Every line: (line number, raw bytes, record or None)."""
        for number, raw in enumerate(worktrees.lines_of(self.read_bytes()), start=1):
            yield number, raw, parse_line(raw)

    # --- locking ------------------------------------------------------------------

    def writer_active(self) -> bool:
        """Whether another process holds the write lock right now (a probe: this never
        waits and holds nothing afterwards): this tasklist's, or the repository's that
        the writers of every worktree take (a last line without its newline in any
        worktree's tasklist is then being written)."""
        if lock.writer_active(self.lock_path):
            return True
        repo = self.shared()
        return repo is not None and lock.writer_active(repo.common / worktrees.LOCK_NAME)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """The exclusive write lock; creates .aidp/ on first use. Its file holds the
        holder's pid, so a writer that times out can name who holds it."""
        self.ensure_dir()
        repo = self.shared()
        if repo is not None:
            repo.refuse_other(self.dir)  # never another worktree's tasklist, via a link
        if repo is None or not os.access(repo.common, os.W_OK):
            with lock.held(self):
                yield
            return
        # The repository's lock first (every worktree's writer takes it: a claim is
        # atomic across worktrees), then this tasklist's own.
        with lock.held(self, repo.common, worktrees.LOCK_NAME), lock.held(self):
            yield

    def _check_linked_dir(self) -> None:
        """A `.aidp` that is a symbolic link may be the user's (a folder kept elsewhere)
        or planted by a cloned repository to make aidp write where a shell reads
        (`.aidp -> ../../.bashrc.d`). Writes go through it only where a tasklist already
        is, or after the user ran `aidp init`, which says where it wrote — and never
        when git tracks the link: the repository made it (`.aidp -> ../other/.aidp`
        would append to another project's tasklist). git runs only for a linked .aidp."""
        if self.adopt_linked_dir or not self.dir.is_symlink():
            return
        target = os.path.realpath(self.dir)
        from aidp.tasklist.git_runner import tracked

        if tracked(self.root, self.dir):
            raise StorageError(
                f"Cannot write {self.path}: {self.dir} is a symbolic link committed to the "
                f"repository (to {target}), and aidp never writes through a link a "
                "repository planted; replace it with a folder; nothing was written")
        if os.path.lexists(self.path):
            return
        raise StorageError(
            f"Cannot create {self.path}: {self.dir} is a symbolic link to {target}, and "
            "aidp starts no tasklist through a link a repository could have planted; if "
            "you made the link, run 'aidp init' once; nothing was written"
        )

    def check_root(self) -> None:
        """Refuse to create the project folder itself unless asked (create_root)."""
        if not self.create_root and not self.root.is_dir():
            # A mistyped --dir or AIDP_DIR must not grow a tree of folders somewhere.
            problem = "is not a folder" if self.root.exists() else "does not exist"
            raise StorageError(
                f"Cannot create {self.dir}: the project folder {self.root} {problem} "
                "(check --dir and AIDP_DIR); the tasklist was not changed"
            )

    def ensure_dir(self) -> None:
        self.check_root()
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
            raise storage_error("create", self.dir, exc) from exc
        with files.folder(self.dir) as folder:  # created once; anything there is left alone
            folder.create(".gitignore", GITIGNORE.encode())

    # --- writing ------------------------------------------------------------------

    def _append_locked(self, records: list[Record]) -> None:
        """One write() of whole lines; the caller holds the lock. On failure the file
        is cut back to its old length, so it is left exactly as it was."""
        if not records:
            return
        data = encode(records)
        try:  # never through a link, never into a FIFO or device (aidp.tasklist.files)
            fd = files.open_file(self.dir, LOG_NAME, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        except OSError as exc:
            raise storage_error("write", self.path, exc) from exc
        try:
            info = os.fstat(fd)
            size = info.st_size
            self.refuse_foreign_encoding(os.pread(fd, attributes.SNIFF_BYTES, 0) if size else b"")
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
                raise storage_error("write", self.path, exc) from exc
            if vouched is not None and vouched[1] == stat_key(info):
                # The cache knew the file as it was before this append: tell it the file
                # now is that file plus whole lines (aidp.tasklist.stamp.mark), so the next read
                # need not re-read the prefix; unless a refresh moved the store on since.
                after = mark(fd)
                if after is not None and after.st_size == size + len(data):
                    write_stamp(self.dir, vouched[0], stat_key(after), vouched[2],
                                over=vouched)
            self.changes += 1
        finally:
            os.close(fd)

    def append(self, records: list[Record]) -> None:
        self.refuse_foreign_encoding()  # before the lock makes anything
        with self.locked():
            self._append_locked(records)

    def update(self, change: Callable[[Fold], list[Record]]) -> list[Record]:
        """Read-modify-append under the lock: `change` sees the current state and returns
        the records to append; concurrent processes lose no update. A task record that
        changes a task gets its task_fields record (aidp.tasklist.fields) in the same write.

        `change` may run twice: on a project without .aidp/ it is first tried on the
        empty state, so a change that writes nothing (or fails) creates nothing. Its
        side effects must therefore be idempotent (assign results, do not accumulate).
        """
        if not self.dir.exists() and not change(Fold() if self.shared() is None
                                                 else self._fold_current()):
            return []
        self.refuse_foreign_encoding()  # before the lock makes anything
        if self.reader is not None:
            # Bring the cache up to date first, outside the lock: a rebuild (a fresh
            # clone, a checkout) must not make every other writer wait for it. The
            # fold is kept: unless another process writes meanwhile, the read under
            # the lock below is this one.
            self._fold_current()
        with self.locked():
            fold = self._fold_current()
            records = change(fold)
            if records:  # each changed task's task_fields record, in the same write
                from aidp.tasklist.fields import with_companions

                records = with_companions(fold.tasks, records)
            self._append_locked(records)
            return records


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)
