"""SQLite's locks on the store hold for as long as a fold reads through it (backlog 35b4).
SQLite locks with POSIX `fcntl` locks, which the kernel drops for the whole process
when any descriptor of the file is closed: a descriptor the loader opened and closed
while a fold's connection was reading let another process write under that read (a
"database disk image is malformed" seen under 16 concurrent writers). Each test holds
a read open in this process and asks a second, real process to take the write lock: it
must be refused, not granted."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from aidp import store
from aidp.core.model import format_ts
from aidp.store import loader
from aidp.tasklist.log import TaskLog

DATABASE = Path(".aidp") / store.CACHE_DIR / store.NAME

# Tries to take SQLite's exclusive lock at once; says whether it got it.
WRITER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)
try:
    conn.execute("BEGIN EXCLUSIVE")
except sqlite3.OperationalError as exc:
    print(exc)
else:
    conn.execute("ROLLBACK")
    print("written")
"""


@pytest.fixture(autouse=True)
def always_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "MIN_BYTES", 0)
    monkeypatch.setattr(loader, "STRICT", True)


def other_writer(project: Path) -> str:
    return subprocess.run([sys.executable, "-c", WRITER, str(project / DATABASE)],
                          capture_output=True, text=True, check=True,
                          timeout=60).stdout.strip()


def filled(log: TaskLog) -> None:
    log.ensure_dir()
    log.path.write_bytes(b"".join(orjson.dumps({
        "id": f"task_1700000000_{n:08x}", "description": f"task {n}", "status": "pending",
        "created_at": format_ts(n), "updated_at": format_ts(n)}) + b"\n" for n in range(50)))


def reading(fold: store.StoreFold) -> object:
    """A read in progress on the fold's connection (SQLite holds a shared lock)."""
    rows = fold.newest_first(batch=1)
    assert len(next(rows)) == 1
    return rows


def test_another_load_keeps_a_live_read_locked(log: TaskLog, project: Path) -> None:
    filled(log)
    first = store.load(log)
    assert isinstance(first, store.StoreFold)
    rows = reading(first)
    assert other_writer(project) == "database is locked"  # the read holds it off
    second = store.load(log)  # opens and gives back its own descriptors meanwhile
    assert isinstance(second, store.StoreFold) and len(second.tasks) == 50
    assert other_writer(project) == "database is locked"
    del rows, first, second
    gc.collect()
    assert other_writer(project) == "written"  # no read left: no lock left


def test_a_fold_dropped_keeps_another_folds_read_locked(log: TaskLog,
                                                       project: Path) -> None:
    filled(log)
    first, second = store.load(log), store.load(log)
    assert isinstance(second, store.StoreFold)
    rows = reading(second)
    del first  # its connection closed, then its descriptor: not while `second` reads
    gc.collect()
    assert other_writer(project) == "database is locked"
    del rows
    assert len(second.tasks) == 50


def test_the_overlays_write_transaction_keeps_its_lock(tmp_path: Path) -> None:
    """Another worktree's lines are folded on top in a transaction the fold keeps (never
    committed): its write lock must hold as long as the fold, from the start."""
    from aidp.store.overlay import load_shared
    from aidp.tasklist import worktrees

    def line(tid: str, stamp: int) -> bytes:
        return orjson.dumps({"id": tid, "description": tid, "status": "pending",
                             "created_at": format_ts(0), "updated_at": format_ts(stamp)}
                            ) + b"\n"

    common = b"".join(line(f"task_1_c{n}", n) for n in range(40))
    lists = []
    for n, data in enumerate([common + line("task_3_theirs", 90),
                              common + line("task_2_mine", 100)]):
        path = tmp_path / f"w{n}" / ".aidp" / "tasklist.jsonl"
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        lists.append((path, n == 1))
    log = TaskLog(tmp_path / "w1")
    plain = worktrees.fold(lists, log.path.read_bytes(), whole_lines=False)
    fold = load_shared(log, lists)
    assert isinstance(fold, store.StoreFold) and "task_3_theirs" in fold.tasks
    assert fold.tasks == plain.tasks
    assert other_writer(tmp_path / "w1") == "database is locked"
    del fold
    gc.collect()
    assert other_writer(tmp_path / "w1") == "written"


def test_a_database_another_loader_is_checking_is_never_removed(log: TaskLog,
                                                                project: Path) -> None:
    """A database found wrong (here: no stamp) is rebuilt, but only by a loader that holds
    its flock alone: removed under a shared flock, another loader still checking or
    refreshing it would go on with a file (and a journal name) that is no longer the
    one at the path."""
    import fcntl
    import os

    from aidp.tasklist.stamp import STAMP_NAME

    filled(log)
    assert isinstance(store.load(log), store.StoreFold)
    database = project / DATABASE
    before = database.stat().st_ino
    (database.parent / STAMP_NAME).unlink()  # the next load must rebuild
    other = os.open(database, os.O_RDONLY)  # another loader, checking it meanwhile
    try:
        fcntl.flock(other, fcntl.LOCK_SH)
        fold = store.load(log)
        assert fold == log.full_fold() and not isinstance(fold, store.StoreFold)
        assert database.stat().st_ino == before  # left to the other loader
    finally:
        os.close(other)
    fold = store.load(log)  # alone now: rebuilt
    assert isinstance(fold, store.StoreFold) and len(fold.tasks) == 50
    assert database.stat().st_ino != before
