"""One build of the store at a time, and the first read after a clone answered at once
(backlog 20fe; docs/store.md, "When the store is built"): a missing store of a
log of loader.BACKGROUND_MIN up to loader.PLAIN_MAX bytes is built by a detached
process (aidp.store.build) while the read folds plainly; a reader that finds a build
under way never starts another (42 builds were counted in one 16-reader storm). Every
build is counted through loader.BUILDS_ENV; a build is made to wait, where a test must
see it running, by pointing BUILDS_ENV at a fifo (the builder blocks on opening it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest
from reliability_support import child_env

from aidp import store
from aidp.core.model import format_ts
from aidp.store import build, loader
from aidp.tasklist import lock
from aidp.tasklist.log import TaskLog

CACHE = Path(".aidp") / store.CACHE_DIR
BACKGROUND_MIN = loader.BACKGROUND_MIN  # what child processes use


@pytest.fixture(autouse=True)
def builds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The store for every size; the background path from 64 KB on; builds counted."""
    monkeypatch.setattr(loader, "MIN_BYTES", 0)
    monkeypatch.setattr(loader, "STRICT", True)
    monkeypatch.setattr(loader, "BACKGROUND_MIN", 64 * 1024)
    path = tmp_path / "builds"
    monkeypatch.setenv(loader.BUILDS_ENV, str(path))
    return path


def filled(log: TaskLog, count: int) -> None:
    log.ensure_dir()
    log.path.write_bytes(b"".join(orjson.dumps(
        {"id": f"task_1700000000_{n:08x}", "description": f"task {n} " + "x" * 150,
         "status": ("pending", "done")[n % 2], "tags": ["t"], "created_at": format_ts(n),
         "updated_at": format_ts(n)}) + b"\n" for n in range(count)))


def counted(path: Path) -> list[str]:
    """The reasons of the builds made so far (one line each)."""
    return [line.split(" ", 1)[1] for line in path.read_text().splitlines()] if (
        path.exists()) else []


def wait_for_builder(project: Path) -> None:
    """Until no build is under way: the builder's turn, taken and given back."""
    held = lock.turn(project / CACHE, loader.TURN, 60)
    assert held is not None, "a builder still runs after 60 s"
    os.close(held)


def building(project: Path) -> bool:
    held = lock.turn(project / CACHE, loader.TURN, 0)
    if held is not None:
        os.close(held)
    return held is None


def equal_to_plain(log: TaskLog) -> None:
    fold, plain = store.load(log), log.full_fold()
    assert isinstance(fold, store.StoreFold)
    assert {k: fold.tasks[k] for k in fold.tasks} == plain.tasks
    assert (fold.lines, fold.damaged) == (plain.lines, plain.damaged)


def test_the_first_read_folds_plainly_and_leaves_a_builder(log: TaskLog, project: Path,
                                                            builds: Path) -> None:
    """A missing store: the answer is a plain fold, at once; a detached builder (the
    read's child in no way that shows) builds the store, equal to a plain fold."""
    filled(log, 600)
    assert loader.BACKGROUND_MIN <= log.path.stat().st_size < loader.PLAIN_MAX
    fold = store.load(log, builder=build.start)
    assert not isinstance(fold, store.StoreFold) and len(fold.tasks) == 600
    wait_for_builder(project)
    assert counted(builds) == ["missing"]  # by the builder (its own pid)
    assert builds.read_text().split()[0] != str(os.getpid())
    equal_to_plain(log)
    assert counted(builds) == ["missing"]  # read, not built again


def test_the_builder_runs_below_the_command_from_its_start(log: TaskLog, project: Path,
                                                           builds: Path) -> None:
    """The builder is at build.NICE as soon as the read that started it goes on: its
    interpreter and imports (~0.1 s of CPU) no longer compete with that read at the
    read's own priority."""
    filled(log, 600)
    store.load(log, builder=build.start)
    pid = build._STARTED[-1].pid  # the builder this read started
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        pytest.skip("the builder ended before it could be looked at")
    assert int(fields[16]) >= build.NICE  # field 19 of /proc/PID/stat: its nice value
    wait_for_builder(project)
    assert counted(builds) == ["missing"]


def test_a_read_during_a_build_neither_builds_nor_waits(
        log: TaskLog, project: Path, builds: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process builds (it has the turn): a read of a small log folds plainly at
    once, starting no builder and not waiting for the turn."""
    filled(log, 600)
    (project / CACHE).mkdir()
    other = lock.turn(project / CACHE, loader.TURN, 0)  # the build under way
    assert other is not None
    asked: list[float] = []
    turn = loader.turn

    def recorded(folder: Path, name: str, seconds: float) -> int | None:
        asked.append(seconds)
        return turn(folder, name, seconds)

    monkeypatch.setattr(loader, "turn", recorded)
    started: list[str] = []
    fold = store.load(log, builder=lambda _log, _held, why: started.append(why))
    assert not isinstance(fold, store.StoreFold) and len(fold.tasks) == 600
    assert asked == [0] and started == [] and counted(builds) == []
    os.close(other)


@pytest.mark.parametrize("built", [True, False], ids=["built", "died"])
def test_a_reader_of_a_large_log_waits_for_the_build_under_way(
        log: TaskLog, project: Path, builds: Path, monkeypatch: pytest.MonkeyPatch,
        built: bool) -> None:
    """Over PLAIN_MAX (or with no builder: the foreground path) a reader that finds a
    build under way waits for it and reads the store it made; if the builder ends
    without one (killed), the reader builds it: one build either way."""
    filled(log, 200)
    monkeypatch.setattr(loader, "BUILD_RATE", 1)  # (a wait bounded only by the test's)
    (project / CACHE).mkdir()
    held = lock.turn(project / CACHE, loader.TURN, 0)  # this test is the builder
    assert held is not None
    waiting = threading.Event()
    turn = loader.turn

    def recorded(folder: Path, name: str, seconds: float) -> int | None:
        waiting.set()
        return turn(folder, name, seconds)

    monkeypatch.setattr(loader, "turn", recorded)
    found: list[object] = []
    reader = threading.Thread(target=lambda: found.append(store.load(TaskLog(project))))
    reader.start()
    assert waiting.wait(30)
    if built:
        loader.attempt(log, held=(held, "the other build"))
    os.close(held)
    reader.join(60)
    assert isinstance(found[0], store.StoreFold) and len(found[0].tasks) == 200
    assert counted(builds) == ["the other build" if built else "missing"]
    equal_to_plain(log)


def test_concurrent_first_reads_make_one_build(project: Path, builds: Path) -> None:
    """Backlog 20fe: eight commands at once on a fresh clone (no cache) start one
    builder between them; each answers the same. Their output is read through pipes
    (capture_output): none waits for the builder."""
    log = TaskLog(project)
    filled(log, 4000)  # over the real BACKGROUND_MIN: the children use the defaults
    assert BACKGROUND_MIN <= log.path.stat().st_size < loader.PLAIN_MAX
    gate = project / "gate"
    code = ("import os, sys, time\n"
            "while not os.path.exists(sys.argv[1]): time.sleep(0.001)\n"
            "from aidp.cli import main\n"
            "sys.argv[1:] = ['tasks', 'list', '--status', 'pending', '--json']\n"
            "main()\n")
    env = child_env(project, **{loader.BUILDS_ENV: str(builds)})
    readers = [subprocess.Popen([sys.executable, "-c", code, str(gate)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for _ in range(8)]
    gate.write_bytes(b"")
    outs = [reader.communicate(timeout=120) for reader in readers]
    assert {reader.returncode for reader in readers} == {0}
    assert len({out for out, _err in outs}) == 1 and len(orjson.loads(outs[0][0])) == 2000
    wait_for_builder(project)
    assert counted(builds) == ["missing"]
    equal_to_plain(log)


def test_the_builder_keeps_none_of_the_callers_pipes(project: Path, builds: Path) -> None:
    """`subprocess.run(capture_output=True)` of a first read returns while its builder
    still runs (held here on a fifo): the builder holds no pipe of the caller's. Killed
    there, it leaves nothing that blocks the next read, which starts a builder again."""
    log = TaskLog(project)
    filled(log, 4000)
    assert BACKGROUND_MIN <= log.path.stat().st_size < loader.PLAIN_MAX
    os.mkfifo(builds)  # the builder blocks opening it, before it makes anything
    env = child_env(project, **{loader.BUILDS_ENV: str(builds)})
    argv = [sys.executable, "-m", "aidp", "tasks", "list", "--status", "pending", "--json"]
    try:
        ran = subprocess.run(argv, env=env, capture_output=True, timeout=60)
        assert ran.returncode == 0 and len(orjson.loads(ran.stdout)) == 2000
        assert building(project)  # (blocked on the fifo: still running)
    finally:  # never left blocked on the fifo, whatever failed
        pids = [int(pid) for pid in os.listdir("/proc") if pid.isdigit() and _builder_of(
            int(pid), project)]
        for pid in pids:
            os.kill(pid, signal.SIGKILL)  # the builder this test started, by its pid
    assert len(pids) == 1
    wait_for_builder(project)  # the kernel gave its turn back
    assert not (project / CACHE / store.NAME).exists()
    os.unlink(builds)
    ran = subprocess.run(argv, env=env, capture_output=True, timeout=60)  # a new builder
    assert ran.returncode == 0 and len(orjson.loads(ran.stdout)) == 2000
    wait_for_builder(project)
    assert counted(builds) == ["missing"]
    equal_to_plain(log)


def _builder_of(pid: int, project: Path) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"aidp.store.build" in argv and str(project).encode() in argv


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_a_link_or_fifo_at_the_turn_is_never_used(log: TaskLog, project: Path,
                                                  tmp_path: Path, kind: str) -> None:
    """A repository can commit a link at .aidp/cache/build.lock (a fifo can be made in
    the clone): the turn's file is never opened through it nor waited on; it is removed
    (the folder is aidp's) and the store is built with a lock file of its own."""
    filled(log, 200)
    (project / CACHE).mkdir()
    victim = tmp_path / "victim"
    victim.write_bytes(b"the user's file\n")
    planted = project / CACHE / loader.TURN
    if kind == "link":
        planted.symlink_to(victim)
    else:
        os.mkfifo(planted)
    equal_to_plain(log)  # built (no hang on a fifo), then read
    assert victim.read_bytes() == b"the user's file\n"
    assert planted.is_file() and not planted.is_symlink()
