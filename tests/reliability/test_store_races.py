"""Races around the store: other processes move it on between two steps of a load or
of an append (backlog 89ac: each cost a rebuild, seconds at 1M events), and a link
swapped in at a path SQLite is about to open by name (backlog 1795: a hostile
repository must never make aidp write through a link). Each test runs the other
party at the exact step where it used to do harm, through the real code paths."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from aidp import store
from aidp.core.model import format_ts
from aidp.store import db, loader
from aidp.tasklist import log as log_module
from aidp.tasklist.log import TaskLog
from aidp.tasklist.stamp import read_stamp

DATABASE = Path(".aidp") / store.CACHE_DIR / store.NAME


@pytest.fixture(autouse=True)
def always_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The store for every size; each build of it counted (loader.BUILDS_ENV)."""
    monkeypatch.setattr(loader, "MIN_BYTES", 0)
    monkeypatch.setattr(loader, "STRICT", True)
    monkeypatch.setattr(loader, "RACY_NS", 0)  # stat data vouched for at once
    builds = tmp_path / "builds"
    monkeypatch.setenv(loader.BUILDS_ENV, str(builds))
    return builds


def task(n: int) -> dict[str, object]:
    return {"id": f"task_1700000000_{n:08x}", "description": f"task {n}",
            "status": "pending", "created_at": format_ts(n), "updated_at": format_ts(n)}


def filled(log: TaskLog, count: int = 30) -> None:
    log.ensure_dir()
    log.path.write_bytes(b"".join(orjson.dumps(task(n)) + b"\n" for n in range(count)))


def builds(tmp_path: Path) -> list[str]:
    path = tmp_path / "builds"
    return [line.split(" ", 1)[1] for line in path.read_text().splitlines()] if (
        path.exists()) else []


def same(fold: object, log: TaskLog) -> bool:
    """The fold answers like a plain fold of the file: its tasks, their lines."""
    full = log.full_fold()
    tasks = fold.tasks  # type: ignore[attr-defined]
    return ({k: tasks[k] for k in tasks} == full.tasks
            and fold.lines == full.lines)  # type: ignore[attr-defined]


def test_a_store_refreshed_past_this_readers_look_at_the_log_is_not_rebuilt(
        log: TaskLog, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader looked at the log; before it opened the store, another process
    appended and brought the store up to date with the longer log. The store then
    covers more than this reader saw: it looks at the log again, it does not take the
    store for another file's."""
    filled(log)
    assert isinstance(store.load(log), store.StoreFold)
    assert builds(tmp_path) == ["missing"]
    clear_strays, other = db.clear_strays, TaskLog(project)

    def meanwhile(path: Path) -> bool:
        monkeypatch.setattr(db, "clear_strays", clear_strays)
        with open(log.path, "ab") as out:  # another process's append and read
            out.write(b"".join(orjson.dumps(task(n)) + b"\n" for n in range(30, 40)))
        assert isinstance(store.load(other), store.StoreFold)
        return clear_strays(path)

    inode = (project / DATABASE).stat().st_ino
    monkeypatch.setattr(db, "clear_strays", meanwhile)
    fold = store.load(log)
    assert isinstance(fold, store.StoreFold) and len(fold.tasks) == 40
    assert same(fold, log)
    assert builds(tmp_path) == ["missing"]  # never rebuilt
    assert (project / DATABASE).stat().st_ino == inode


def test_an_append_does_not_put_back_the_stamp_of_a_store_refreshed_meanwhile(
        log: TaskLog, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that appended to a file the stamp vouched for vouches for the longer
    file. If another process refreshed the store between the writer's look at the
    stamp and its vouching, the stamp names the refreshed store: writing the old one
    back (its nonce, its database's stat data) made the next read rebuild."""
    filled(log)
    store.load(log)
    log.append([task(30)])  # vouched: the stamp follows aidp's own appends
    assert isinstance(store.load(log), store.StoreFold)
    mark, other = log_module.mark, TaskLog(project)

    def meanwhile(fd: int) -> os.stat_result | None:
        assert isinstance(store.load(other), store.StoreFold)  # refreshed: a new stamp
        return mark(fd)

    monkeypatch.setattr(log_module, "mark", meanwhile)
    refreshed_by_other = read_stamp(project / ".aidp")
    log.append([task(31)])
    assert read_stamp(project / ".aidp") != refreshed_by_other  # the other's, not put back
    monkeypatch.setattr(log_module, "mark", mark)
    fold = store.load(log)
    assert isinstance(fold, store.StoreFold) and same(fold, log)
    assert builds(tmp_path) == ["missing"]


@pytest.mark.parametrize("victim_bytes", [b"", b"a user's notes\n"])
def test_a_link_swapped_in_before_sqlite_opens_a_new_database_is_not_written_through(
        log: TaskLog, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        victim_bytes: bytes) -> None:
    """Backlog 1795: SQLite opens a file by its name. The half-built database, created
    here a moment before, replaced by a link to the user's file (an empty file is a
    database to SQLite, which would write the store's tables into it): the file SQLite
    opened is checked first, nothing is written through the link, and the answer
    comes from the tasklist."""
    monkeypatch.setattr(loader, "STRICT", False)
    filled(log)
    victim = tmp_path / "elsewhere" / "notes.db"
    victim.parent.mkdir()
    victim.write_bytes(victim_bytes)
    connect = db.connect

    def swapped(path: Path) -> object:
        if path.name.endswith(".tmp"):
            path.unlink()
            path.symlink_to(victim)
        return connect(path)

    monkeypatch.setattr(db, "connect", swapped)
    fold = store.load(log)
    assert same(fold, log) and not isinstance(fold, store.StoreFold)
    assert victim.read_bytes() == victim_bytes
    assert [p.name for p in victim.parent.iterdir()] == ["notes.db"]  # no journal there
    cache = project / DATABASE.parent
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]  # none left over
    monkeypatch.setattr(db, "connect", connect)
    assert isinstance(store.load(log), store.StoreFold)  # built, once no link is in the way


def test_a_link_swapped_in_for_the_database_after_its_checks_is_not_trusted(
        log: TaskLog, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """store.db checked (a regular file, leased through a descriptor that follows no
    link), then replaced by a link to another project's store before SQLite opens it
    by name: that store is never trusted nor changed, and the answer is this file's."""
    other = TaskLog(tmp_path / "other")
    filled(other, 5)
    assert isinstance(store.load(other), store.StoreFold)
    theirs = tmp_path / "other" / DATABASE
    before = theirs.read_bytes()
    filled(log)
    store.load(log)
    log.append([task(30)])  # so the next load refreshes (writes) the store
    connect = db.connect

    def swapped(path: Path) -> object:
        if path.name == db.NAME and path.parent == project / DATABASE.parent:
            path.unlink()
            path.symlink_to(theirs)
        return connect(path)

    monkeypatch.setattr(db, "connect", swapped)
    fold = store.load(log)
    assert same(fold, log) and len(fold.tasks) == 31
    assert theirs.read_bytes() == before
    assert not (project / DATABASE).is_symlink()
