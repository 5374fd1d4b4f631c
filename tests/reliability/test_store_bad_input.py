"""Issue 23's bad input for the store: a cache file that is not a database, a database
another process holds locked, a full disk under the store (a read-only one:
tests/test_index.py and tests/reliability/test_faults.py). Each time: the answer from
the file, one note on stderr at most, no hang, nothing written to the tasklist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from reliability_support import child_env

from aidp import store
from aidp.core.model import format_ts
from aidp.store import db, loader
from aidp.tasklist.log import TaskLog

DATABASE = Path(".aidp") / store.CACHE_DIR / store.NAME
COUNT = 400  # lines: over loader.MIN_BYTES, so commands read through the store

# Holds SQLite's exclusive lock on the database until its stdin closes.
HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
sys.stdin.read()
"""


def line(n: int, status: str = "pending") -> bytes:
    return orjson.dumps({"id": f"task_1700000000_{n:08x}", "description": f"task {n} " + "x" * 80,
                         "status": status, "created_at": format_ts(n),
                         "updated_at": format_ts(n)}) + b"\n"


def seeded(project: Path) -> TaskLog:
    log = TaskLog(project)
    log.ensure_dir()
    log.path.write_bytes(b"".join(line(n) for n in range(COUNT)))
    assert log.path.stat().st_size > loader.MIN_BYTES
    assert isinstance(store.load(log), store.StoreFold)  # the store is there
    with open(log.path, "ab") as out:  # and behind the file: a read must refresh it
        out.write(line(1, "done") + line(COUNT))
    return log


def listed(project: Path) -> tuple[list[str], str]:
    """`tasks list --json`'s pending ids and stderr, in a process of its own (a hang
    fails the test at the timeout)."""
    ran = subprocess.run([sys.executable, "-m", "aidp", "tasks", "list", "--json"],
                         env=child_env(project), capture_output=True, timeout=120)
    assert ran.returncode == 0, ran.stderr.decode()
    return [t["id"] for t in orjson.loads(ran.stdout)], ran.stderr.decode()


def expected(log: TaskLog) -> list[str]:
    tasks = log.full_fold().tasks
    return sorted(t for t in tasks if tasks[t]["status"] == "pending")


def test_a_cache_file_that_is_not_a_database(project: Path) -> None:
    log = seeded(project)
    (project / DATABASE).write_bytes(b"not a database, " * 1000)
    before = log.path.read_bytes()
    ids, err = listed(project)
    assert sorted(ids) == expected(log) and len(ids) == COUNT
    assert err.count("\n") <= 1
    assert log.path.read_bytes() == before


def test_a_database_another_process_holds_locked(project: Path) -> None:
    log = seeded(project)
    before = log.path.read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(project / DATABASE)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        ids, err = listed(project)
    finally:
        holder.communicate(timeout=60)
    assert sorted(ids) == expected(log) and len(ids) == COUNT
    assert err.count("\n") <= 1
    assert log.path.read_bytes() == before
    assert isinstance(store.load(log), store.StoreFold)  # once free, the store answers


def test_a_full_disk_under_the_store(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's answer to a full disk (SQLITE_FULL, as on ENOSPC) while the store is
    refreshed, then while it is built anew: the file answers, no half-built database
    is left behind, and the store is whole again once there is room."""
    log = seeded(project)
    with open(log.path, "ab") as out:  # more than the free pages hold
        out.write(b"".join(line(n) for n in range(COUNT + 1, 2 * COUNT)))
    before = log.path.read_bytes()
    connect = db.connect

    def full(path: Path) -> object:
        conn = connect(path)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count={max(pages, 2)}")  # no room to grow
        return conn

    monkeypatch.setattr(db, "connect", full)
    fold = store.load(log)
    assert not isinstance(fold, store.StoreFold)
    assert sorted(t for t in fold.tasks if fold.tasks[t]["status"] == "pending") == expected(log)
    (project / DATABASE).unlink()  # a rebuild, on the same full disk
    fold = store.load(log)
    assert not isinstance(fold, store.StoreFold) and len(fold.tasks) == 2 * COUNT
    assert [p.name for p in (project / DATABASE).parent.iterdir()
            if p.name.startswith(store.NAME)] == []  # nothing half-built left
    assert log.path.read_bytes() == before
    monkeypatch.setattr(db, "connect", connect)
    assert isinstance(store.load(log), store.StoreFold)
