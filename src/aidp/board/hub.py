"""The live part of `aidp board`: each project's board kept current, and every open
page told of each change (docs/guide.md, "The board").

One watcher thread for the whole board, never a process per task nor a re-read on a
timer: it stats each project's tasklists (every worktree's, aidp.tasklist.worktrees)
a few times a second, and only when their stat data changed (an append by any process,
a `git pull` or merge that wrote a new file, a worktree added or removed) reads the
project again — through the store, which reads only what was appended — and sends the
cards that changed. A lease that runs out changes no file: the watcher also reads again
when the earliest live lease ends. An idle board costs those few stat() calls a second.

Pages listen on server-sent events: each connection has a queue, fed from the watcher
thread through the server's event loop; a page that falls behind gets the whole board
again instead of a backlog of patches.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from aidp.app.project import Project
from aidp.board import cards
from aidp.core.errors import AidpError

INTERVAL = 0.25  # seconds between two looks at the files
QUEUE = 64  # patches a page may fall behind by before it gets the whole board again
T = TypeVar("T")


class Board:
    """One project on the board: its Project, its last snapshot and the stat data that
    snapshot was read under. `lock`: one reader or writer of the project at a time."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.repo = str(project.root)
        self.name = project.root.name or self.repo
        self.lock = threading.Lock()
        self.snap: cards.Snapshot | None = None
        self.key: object = None
        self._common: tuple[Path, object] | None = None  # git's worktrees folder, its stat
        self._paths: list[Path] = []

    def _paths_now(self) -> list[Path]:
        """The tasklists a read of this project folds: every live worktree's, listed
        again only when git's folder of worktrees changed."""
        shared = self.project.log.shared()
        if shared is None:
            return [self.project.log.path]
        folder = shared.common / "worktrees"
        seen = _stat(folder)
        if self._common is None or self._common != (folder, seen) or not self._paths:
            self._paths = [path for path, _own in shared.tasklists()]
            self._common = (folder, seen)
        return self._paths

    def watch_key(self) -> object:
        """What a change to any of the project's tasklists changes (stat data only)."""
        paths = self._paths_now()
        return tuple(_stat(path) for path in paths), tuple(paths)

    def refresh(self) -> bytes | None:
        """Read the project again (the caller holds `lock`); the patch to send, if
        anything changed. A read that fails keeps the cards shown and says why."""
        from aidp.app.overview import overview

        key = self.watch_key()  # before the read: a write during it is seen next time
        try:
            view = overview(self.project)
            snap = cards.snapshot(view, repo=self.repo, name=self.name)
        except (AidpError, OSError) as exc:
            snap = _failed(self.snap, self.repo, self.name, str(exc))
        except Exception as exc:  # a board outlives any one read: it says why, goes on
            snap = _failed(self.snap, self.repo, self.name, f"{type(exc).__name__}: {exc}")
        before, self.snap, self.key = self.snap, snap, key
        if before is None:
            return cards.full(snap)
        return cards.patch(before, snap)


def _failed(last: cards.Snapshot | None, repo: str, name: str, why: str) -> cards.Snapshot:
    import orjson

    meta = {"repo": repo, "name": name, "counts": {}, "damaged": 0, "paused": [],
            "decisions": [], "error": f"Cannot read the tasklist: {why}"}
    return cards.Snapshot(last.cards if last is not None else {}, orjson.dumps(meta), None)


def _stat(path: Path) -> object:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class Hub:
    """Every project's Board, the pages listening, and the watcher between them."""

    def __init__(self, projects: list[Project], *, interval: float = INTERVAL) -> None:
        self.boards = [Board(project) for project in projects]
        self.by_repo = {board.repo: board for board in self.boards}
        self.interval = interval
        self.loop: asyncio.AbstractEventLoop | None = None
        self.queues: set[asyncio.Queue[bytes | None]] = set()
        self.closing = threading.Event()
        self._thread: threading.Thread | None = None

    # --- reading -----------------------------------------------------------------

    def load(self) -> None:
        """Every board read once (before the server answers its first page)."""
        for board in self.boards:
            with board.lock:
                board.refresh()

    def everything(self, part: str = "all",
                   snaps: list[cards.Snapshot | None] | None = None) -> bytes:
        """The board of every project, as a page's first event (`part`: cards.full's;
        `snaps`: the snapshots to show, default the boards' own now)."""
        if snaps is None:
            snaps = [board.snap for board in self.boards]
        parts = [cards.full(snap, part) for snap in snaps if snap is not None]
        return b'{"projects":[' + b",".join(parts) + b"]}"

    def board(self, repo: str) -> Board:
        found = self.by_repo.get(repo)
        if found is None:
            from aidp.core.errors import InvalidInput

            raise InvalidInput(f"Invalid repo {repo!r}: this board shows "
                               f"{', '.join(self.by_repo)}")
        return found

    def act(self, repo: str, action: Callable[[Project], T]) -> T:
        """Run `action` on a project (a use case), then show its result at once to
        every page (not at the watcher's next look)."""
        board = self.board(repo)
        with board.lock:
            try:
                return action(board.project)
            finally:
                self._publish(board.refresh())

    def read(self, repo: str, question: Callable[[Project], T]) -> T:
        board = self.board(repo)
        with board.lock:
            return question(board.project)

    # --- watching ----------------------------------------------------------------

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._thread = threading.Thread(target=self._watch, name="aidp-board-watch",
                                        daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self.closing.wait(self.interval):
            now = time.time_ns() // 1000
            for board in self.boards:
                snap = board.snap
                due = snap is not None and snap.next_stale is not None and \
                    snap.next_stale <= now
                try:
                    changed = due or board.watch_key() != board.key
                except OSError:
                    changed = True
                if not changed:
                    continue
                with board.lock:
                    self._publish(board.refresh())

    # --- the pages ---------------------------------------------------------------

    def subscribe(self) -> asyncio.Queue[bytes | None]:
        """A new page's queue (in the event loop); its first events are the whole board:
        the cards its columns show first, then the rest (at 10,000 open tasks, 500
        cards before 3 MB)."""
        queue: asyncio.Queue[bytes | None] = asyncio.Queue(QUEUE)
        snaps = [board.snap for board in self.boards]  # both parts of the same state
        queue.put_nowait(event("board", self.everything("first", snaps)))
        queue.put_nowait(event("rest", self.everything("rest", snaps)))
        self.queues.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[bytes | None]) -> None:
        self.queues.discard(queue)

    def _publish(self, data: bytes | None) -> None:
        """Send a patch to every page (from any thread)."""
        if data is None or self.loop is None or self.loop.is_closed():
            return
        try:
            self.loop.call_soon_threadsafe(self._deliver, event("patch", data))
        except RuntimeError:  # the loop closed meanwhile
            pass

    def _deliver(self, message: bytes) -> None:
        for queue in list(self.queues):
            try:
                queue.put_nowait(message)
            except asyncio.QueueFull:  # behind: the whole board again, nothing else
                while not queue.empty():
                    queue.get_nowait()
                queue.put_nowait(event("board", self.everything()))

    def close(self) -> None:
        """Stop watching and end every page's stream (from any thread)."""
        self.closing.set()
        if self.loop is None or self.loop.is_closed():
            return

        def end() -> None:
            for queue in list(self.queues):
                while not queue.empty():
                    queue.get_nowait()
                queue.put_nowait(None)

        try:
            self.loop.call_soon_threadsafe(end)
        except RuntimeError:
            pass


def event(kind: str, data: bytes) -> bytes:
    """One server-sent event (the data is one line of JSON)."""
    return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"
