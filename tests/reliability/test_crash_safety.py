"""Crash safety: SIGKILL at any moment loses nothing that was acknowledged.

Writers (`tasks add` / `tasks done` in a loop, and one-shot `python -m aidp`) and
maintenance (`tasks compact` / `tasks repair`) are killed with SIGKILL at random
points. Afterwards:
- every write that had returned success (exit 0 and printed its id) is in the file;
- the file loads; the only damage a kill may leave is a torn record (a prefix of one
  line, never two lines mixed), at most one per kill;
- a compaction or repair that was killed left either the old file or the new one,
  never a mix: the tasks fold to exactly what they were;
- the next write works (a killed lock holder does not block anyone).
"""

from __future__ import annotations

import fcntl
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from reliability_support import SLOW, child_env

from aidp.core.model import new_task, transition
from aidp.tasklist.fields import fold_bytes
from aidp.tasklist.log import LOCK_NAME, LOG_NAME, TaskLog, encode

WORKERS = Path(__file__).with_name("workers.py")


def spawn(mode: str, seed: int, project: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WORKERS), mode, str(seed)],
        env=child_env(project),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def kill(proc: subprocess.Popen) -> tuple[list[list[str]], str]:
    """SIGKILL the worker; its acknowledgements (complete lines only) and stderr."""
    proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    lines = out.split(b"\n")
    lines.pop()  # after the last newline: nothing, or an ack cut short by the kill
    return [line.decode().split(" ", 1) for line in lines], err.decode(errors="replace")


def check_file(project: Path, kills: int, known: frozenset[bytes] = frozenset()) -> dict:
    """The file loads; damage is only torn records, at most one per kill (plus the
    `known` damage the file started with)."""
    path = project / ".aidp" / LOG_NAME
    fold = TaskLog(project).read()
    torn = []
    old = 0
    for raw in path.read_bytes().split(b"\n"):
        if not raw.strip():
            continue
        if raw in known:
            old += 1
            continue
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            torn.append(raw)
            continue
        assert isinstance(value, dict), raw
    assert fold.damaged == len(torn) + old and len(torn) <= kills
    for raw in torn:
        # a prefix of one record: it starts like one and holds no second record
        assert raw.startswith(b'{"'), raw[:200]
        assert raw.count(b'{"id":') <= 1 and b"\x00" not in raw, raw[:200]
    return fold.tasks


def check_acks(tasks: dict[str, dict], acks: list[list[str]]) -> int:
    """Every acknowledged write is there; returns how many were checked."""
    added = {words[1] for words in acks if words[0] == "add"}
    done = {words[1] for words in acks if words[0] == "done"}
    missing = added - set(tasks)
    assert not missing, f"acknowledged adds lost: {sorted(missing)[:5]}"
    not_done = {tid for tid in done if tasks[tid]["status"] != "done"}
    assert not not_done, f"acknowledged done lost: {sorted(not_done)[:5]}"
    return len(added) + len(done)


def next_write_works(project: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "aidp", "tasks", "add", "-q", "after the crash"],
        env=child_env(project), capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() in TaskLog(project).read().tasks


def crash_rounds(project: Path, rounds: int, workers: int, max_life: float, seed: int,
                 min_acks: int = 30) -> int:
    """At least `rounds` rounds of killed writers, more (up to ten times as many) until
    `min_acks` writes were acknowledged, however slow the machine is to start them."""
    rnd = random.Random(seed)
    acks: list[list[str]] = []
    kills = 0
    for round_ in range(rounds * 10):
        if round_ >= rounds and len(acks) >= min_acks:
            break
        procs = [spawn("writer", seed * 1000 + round_ * 10 + n, project) for n in range(workers)]
        deadlines = [(time.monotonic() + rnd.uniform(0.05, max_life), p) for p in procs]
        for deadline, proc in sorted(deadlines, key=lambda pair: pair[0]):
            time.sleep(max(0.0, deadline - time.monotonic()))
            got, err = kill(proc)
            assert "Traceback" not in err, err
            acks.extend(got)
            kills += 1
        if acks or (project / ".aidp" / LOG_NAME).exists():  # a busy machine: all killed early
            check_file(project, kills)
    tasks = check_file(project, kills)
    checked = check_acks(tasks, acks)
    next_write_works(project)
    return checked


def test_killed_writers_lose_no_acknowledged_write(project: Path) -> None:
    rounds = 40 if SLOW else 6
    checked = crash_rounds(project, rounds=rounds, workers=3, max_life=1.5, seed=1)
    assert checked > 20  # the workers did get to write before they were killed


@pytest.mark.slow
def test_killed_writers_long_run(project: Path) -> None:
    crash_rounds(project, rounds=100, workers=4, max_life=3.0, seed=7)


def test_killed_one_shot_commands_lose_no_acknowledged_write(project: Path) -> None:
    """`python -m aidp tasks add|done`, each killed at a random moment of its life."""
    rnd = random.Random(3)
    acks: list[list[str]] = []
    added: list[str] = []
    kills = 0
    # A command's life is as long as this machine makes it (a busy CI box: seconds):
    # measure one, unkilled, and kill the others anywhere in 0–1.5× of that.
    started = time.monotonic()
    first = subprocess.run([sys.executable, "-m", "aidp", "tasks", "add", "-q", "one shot"],
                           env=child_env(project), capture_output=True, timeout=120)
    life = time.monotonic() - started
    assert first.returncode == 0, first.stderr.decode(errors="replace")
    acks.append(["add", first.stdout.decode().strip()])
    added.append(acks[-1][1])
    for _ in range(60 if SLOW else 12):
        if added and rnd.random() < 0.4:
            tid = rnd.choice(added)
            args, kind = ["tasks", "done", tid], "done"
        else:
            args, kind = ["tasks", "add", "-q", "one shot " + "z" * rnd.randrange(300)], "add"
        proc = subprocess.Popen([sys.executable, "-m", "aidp", *args], env=child_env(project),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(rnd.uniform(0.0, 1.5 * life))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        out, err = proc.communicate(timeout=60)
        if proc.returncode == 0:
            assert b"Traceback" not in err
            value = out.decode().strip()
            acks.append([kind, value if kind == "add" else tid])
            if kind == "add":
                added.append(value)
    tasks = check_file(project, kills)
    check_acks(tasks, acks)
    next_write_works(project)


# --- maintenance killed half way ---------------------------------------------------


def big_log(tasks: int, updates: int) -> bytes:
    """A log worth compacting: `tasks` tasks with `updates` superseded states each,
    a few damaged lines, and a torn last line."""
    records = []
    clock = 1_795_000_000_000_000
    for n in range(tasks):
        clock += 10
        task = new_task(f"big log task {n} " + "w" * 80, now=clock, tags=["big"])
        records.append(task)
        for step in range(updates):
            clock += 10
            task = transition(task, ("in_progress", "pending", "done")[step % 3], now=clock)
            records.append(task)
    data = encode(records)
    half = len(data) // 2
    cut = data.index(b"\n", half) + 1
    return data[:cut] + b"\n".join(ORIGINAL_DAMAGE) + b"\n" + data[cut:] + b'{"id":"task_'


ORIGINAL_DAMAGE = frozenset([b"<<<<<<< HEAD", b"=======", b">>>>>>> other", b'{"id":"task_'])


def maintenance_round(project: Path, original: bytes, expected: dict, seed: int) -> None:
    rnd = random.Random(seed)
    path = project / ".aidp" / LOG_NAME
    path.parent.mkdir(parents=True)
    path.write_bytes(original)
    procs = [spawn("maintainer", seed, project), spawn("writer", seed + 1, project)]
    deadline = time.monotonic() + rnd.uniform(0.3, 1.5 if not SLOW else 4.0)
    while time.monotonic() < deadline:
        # Whoever reads the file without the lock (git add, an editor, cp) while it is
        # being replaced sees the old file or the new one, never a partial one.
        seen = fold_bytes(path.read_bytes()).tasks
        assert all(seen.get(tid) == task for tid, task in expected.items()), "partial file seen"
    rnd.shuffle(procs)
    acks: list[list[str]] = []
    for proc in procs:
        got, err = kill(proc)
        assert "Traceback" not in err, err
        acks.extend(got)
        time.sleep(rnd.uniform(0.0, 0.2))
    tasks = check_file(project, kills=2, known=ORIGINAL_DAMAGE)
    for tid, task in expected.items():  # untouched by the writer: exactly as before
        assert tasks[tid] == task
    check_acks(tasks, acks)
    leftovers = [p.name for p in path.parent.iterdir()
                 if p.name not in (LOG_NAME, LOCK_NAME, ".gitignore", "backups", "cache")]
    assert all(name.endswith(".tmp") for name in leftovers), leftovers  # *.tmp is git-ignored
    next_write_works(project)


def test_killed_compact_and_repair_leave_old_or_new_file(tmp_path: Path) -> None:
    original = big_log(tasks=2000, updates=4)
    expected = TaskLog(_write(tmp_path / "reference", original)).read().tasks
    assert len(expected) == 2000
    for n in range(24 if SLOW else 5):
        maintenance_round(tmp_path / f"round{n}", original, expected, seed=100 + n)


def _write(project: Path, data: bytes) -> Path:
    (project / ".aidp").mkdir(parents=True)
    (project / ".aidp" / LOG_NAME).write_bytes(data)
    return project


# --- the replace itself: temp file, fsync, rename, under the lock -----------------------


@pytest.mark.parametrize("command", ["repair", "compact"])
def test_maintenance_replaces_atomically_under_the_lock(
    cli, log: TaskLog, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    log.append([new_task("a"), new_task("b")])
    first = log.read().tasks
    tid = next(iter(first))
    log.append([transition(first[tid], "done")])
    with open(log.path, "ab") as handle:
        handle.write(b"garbage\n")
    before = log.read().tasks
    events: list[tuple] = []
    real_fsync, real_replace = os.fsync, os.replace

    def lock_is_held() -> bool:
        """Held exclusively: not even a shared lock can be had."""
        fd = os.open(log.lock_path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def fsync(fd: int) -> None:
        real_fsync(fd)
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))

    def replace(src, dst, *, src_dir_fd=None, dst_dir_fd=None) -> None:
        def full(name, fd) -> str:  # aidp.tasklist.files renames relative to a folder's descriptor
            return str(name) if fd is None else f"{os.readlink(f'/proc/self/fd/{fd}')}/{name}"

        whole = full(src, src_dir_fd)
        events.append(("replace", whole, full(dst, dst_dir_fd), lock_is_held(),
                       Path(whole).read_bytes()))
        real_replace(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    with monkeypatch.context() as patch:  # undone before the checks read anything
        patch.setattr(os, "fsync", fsync)
        patch.setattr(os, "replace", replace)
        result = cli("tasks", command)
    assert result.code == 0, result

    replaces = [e for e in events if e[0] == "replace"]
    assert len(replaces) == 1
    _, src, dst, locked, content = replaces[0]
    assert dst == str(log.path) and locked, "replaced without holding the lock"
    assert Path(src).parent == log.path.parent  # same directory: rename is atomic
    assert content == log.path.read_bytes()  # the temp file was complete before the rename
    synced = [e[1] for e in events if e[0] == "fsync"]
    at = events.index(replaces[0])
    assert src in [e[1] for e in events[:at] if e[0] == "fsync"], "temp file not fsynced"
    assert str(log.dir) in synced[synced.index(src) + 1:], "directory not fsynced after rename"
    assert events[at + 1:] and events[at + 1][0] == "fsync"
    assert log.read().tasks == before and log.read().damaged == 0


# --- a killed lock holder --------------------------------------------------------------

HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(1, b"locked\\n")
import time
time.sleep(600)
"""


def _blocked_waiters(lock_path: Path) -> int:
    """How many processes wait for a lock on this file (from /proc/locks)."""
    inode = os.stat(lock_path).st_ino
    count = 0
    with open("/proc/locks") as handle:
        for line in handle:
            fields = line.split()
            if "->" in fields and fields[fields.index("->") + 5].endswith(f":{inode}"):
                count += 1
    return count


def test_a_lock_held_by_a_killed_process_is_released(project: Path, log: TaskLog) -> None:
    """flock belongs to the open file: the kernel drops it when its holder dies, however
    it dies. A writer blocked behind a holder proceeds the moment the holder is killed,
    and the file holds exactly its write."""
    log.append([new_task("before")])
    before = log.path.read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(log.lock_path)],
                              stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"locked\n"
        writer = subprocess.Popen(
            [sys.executable, "-m", "aidp", "tasks", "add", "-q", "blocked behind a dead holder"],
            env=child_env(project), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        if os.path.exists("/proc/locks"):
            for _ in range(60_000):  # until the writer waits for the lock (or 10 minutes)
                if _blocked_waiters(log.lock_path):
                    break
                assert writer.poll() is None, writer.communicate()
                time.sleep(0.01)
            else:
                raise AssertionError("the writer never reached the lock")
        assert writer.poll() is None, "the writer did not wait for the lock"
        assert log.path.read_bytes() == before  # nothing written while the lock is held
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    tid = out.decode().strip()
    after = log.path.read_bytes()
    assert after.startswith(before)
    assert orjson.loads(after[len(before):])["id"] == tid
    assert (project / ".aidp" / LOCK_NAME).exists()  # the stale lock file itself is harmless
