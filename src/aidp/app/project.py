"""A project opened once: its root, its tasklist, the reader its reads go through, and
the session its commands work on. Every surface makes one per process (the MCP server
one per server) and hands it to the use cases (aidp.app).

The store is passed in, never registered: `StoreReader` is the reader a `TaskLog` is
given (log.Reader), and it imports the store (and sqlite3) on its first read, so a
command that only appends (`tasks add`) never loads it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aidp.tasklist.log import Fold, Reader, TaskLog
from aidp.tasklist.worktrees import stat_keys

# Below this size (every worktree's tasklist together) a read of several worktrees is
# their plain fold, never the store's overlay (nor its import: sqlite3 and the store,
# ~4 ms of a command's start): cheaper there (1.4 against 2.4 ms at 4 x 69 KB, ~3-4 against
# ~3 at 1 MB), no write transaction held on the store for the whole command (the other
# processes of the worktree wait for it, then fold plainly — under the repository's lock
# too), and a command's second read (a write's, under the lock) carries it on in half a
# millisecond (aidp.tasklist.carry.extend) where the overlay reads again.
SHARED_MIN_BYTES = 1 << 20


class StoreReader:
    """`TaskLog.read` through the store (log.Reader), for one worktree (aidp.store) and
    for several (aidp.store.overlay), each imported on its first read. `background`: a
    missing store of a log in the background range is built by a detached process while
    the read folds plainly (a command answering at once: aidp.store.build); otherwise
    by the read itself."""

    def __init__(self, *, background: bool = True) -> None:
        self.background = background

    def load(self, log: TaskLog, *, whole_lines: bool = False) -> Fold:
        from aidp.store import load

        return load(log, whole_lines=whole_lines,
                    builder=_start_builder if self.background else None)

    def load_shared(self, log: TaskLog, tasklists: list[tuple[Path, bool]], *,
                    whole_lines: bool = False) -> Fold | None:
        sizes = [key[2] for key in stat_keys([path for path, _own in tasklists]) if key]
        if sum(sizes) < SHARED_MIN_BYTES:
            return None  # the plain fold
        from aidp.store.overlay import load_shared

        return load_shared(log, tasklists, whole_lines=whole_lines,
                           builder=_start_builder if self.background else None)


def _start_builder(log: TaskLog, held: int, why: str) -> None:
    from aidp.store.build import start  # only when a store is to be built

    start(log, held, why)


class Project:
    """One project, opened once: `log` (its tasklist, read through `reader`), `read()`
    the folded state now, `session()` the session its commands work on.

    `session`: the one named (--session), else AIDP_SESSION, else the person's own list
    on the git branch, else the branch, else `default` (aidp.todos.resolve_session).
    `on_read(fold)` hears of every fold read (a surface tells of damaged lines once);
    `on_wait`, `on_notice`, `lock_timeout`, `create_root`, `freeze`: as TaskLog's."""

    def __init__(self, root: Path, *, session: str | None = None,
                 reader: Reader | None = None, lock_timeout: float | None = None,
                 on_wait: Callable[[Path], None] | None = None,
                 on_notice: Callable[[str], None] | None = None,
                 on_read: Callable[[Fold], None] | None = None,
                 create_root: bool = False, freeze: bool = False) -> None:
        self.root = root
        self.named_session = session
        self.on_read = on_read
        self.log = TaskLog(root, create_root=create_root, on_wait=on_wait,
                           lock_timeout=lock_timeout, on_notice=on_notice, reader=reader,
                           freeze=freeze)

    def __repr__(self) -> str:
        return f"Project({str(self.root)!r}, session={self.named_session!r})"

    def read(self) -> Fold:
        """The folded state now. `TaskLog.read` reuses its fold while the file is
        unchanged: the read a change makes under the lock, and the read that named the
        session, cost nothing more."""
        fold = self.log.read()
        if self.on_read is not None:
            self.on_read(fold)
        return fold

    def session(self, override: str | None = None) -> str:
        """The session a command works on: `override` (a command's own --session), else
        the project's. Naming the person's own list may read the tasklist (a list under
        the bare branch name keeps working for its owner): the fold the command's own
        read then reuses."""
        from aidp.todos import resolve_session

        return resolve_session(override or self.named_session, self.root,
                               read=self.log.read)

    def filing_session(self) -> str:
        """The session a task filed now records, named without reading anything: as
        `session()`, but the person's own list is always `<branch>@<identity>` (filing a
        task appends one line; it never folds the log to look for an older list under
        the bare branch name)."""
        from aidp.tasklist.person import unread_session  # not the todos package

        return unread_session(self.named_session, self.root)[0]
