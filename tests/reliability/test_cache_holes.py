"""Issue 16: never a wrong answer, never a crash, at any size. Each wrong answer or crash
found by attacking the read cache from outside is pinned here (docs/reliability.md
names the test of each)."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import orjson
import pytest
from reliability_support import child_env

from aidp import store
from aidp.core.model import format_ts
from aidp.store import loader
from aidp.tasklist.log import TaskLog

DATABASE = Path(".aidp") / store.CACHE_DIR / store.NAME
IN_A_MINUTE = 60  # seconds: every subprocess here must end long before this


def task(n: int, status: str = "pending", *, stamp: int = 0, **extra: object) -> bytes:
    record = {"id": f"task_1700000000_{n:08x}", "description": f"task number {n}",
              "status": status, "priority": "medium", "created_at": format_ts(10**15 + n),
              "updated_at": format_ts(10**15 + n + stamp), "tags": [], **extra}
    return orjson.dumps(record) + b"\n"


def big_log(count: int = 400) -> bytes:
    """Big enough that reads go through the store (over loader.MIN_BYTES)."""
    data = b"".join(task(n) for n in range(count))
    assert len(data) > loader.MIN_BYTES
    return data


def aidp(project: Path, *args: str, timeout: float = IN_A_MINUTE,
         **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "aidp", *args], env=child_env(project, **env),
                          capture_output=True, text=True, timeout=timeout)


def cacheless_stats(project: Path) -> dict[str, object]:
    from aidp.backlog import tasks

    return tasks.stats(TaskLog(project).full_fold().tasks.values())


# --- stale answers -----------------------------------------------------------------------


def git(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, check=True, capture_output=True,
                          text=True, env=child_env(project)).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_checkout_of_a_longer_branch_never_answers_from_the_old_file(project: Path) -> None:
    """Branch A's store, then `git checkout B` (one pending line rewritten to done,
    same length, plus appended tasks): ext4 often gives the new file the freed inode
    number. stats and list must equal a cache-less read, every time."""
    git(project, "init", "-q", "-b", "a")
    (project / ".aidp").mkdir()
    log_path = project / ".aidp" / "tasklist.jsonl"
    base = big_log()
    log_path.write_bytes(base)
    git(project, "add", "-f", ".aidp/tasklist.jsonl")
    git(project, "commit", "-qm", "a")
    git(project, "checkout", "-qb", "b")
    middle = task(200)
    assert middle in base
    log_path.write_bytes(base.replace(middle, middle.replace(b'"pending"', b'"done"   '))
                         + task(1000) + task(1001))
    git(project, "commit", "-qam", "b")
    for _ in range(4):
        git(project, "checkout", "-q", "a")
        first = aidp(project, "tasks", "stats", "--json")
        assert first.returncode == 0, first.stderr
        time.sleep(0.01)
        git(project, "checkout", "-q", "b")
        got = aidp(project, "tasks", "stats", "--json")
        assert got.returncode == 0, got.stderr
        assert orjson.loads(got.stdout) == {**orjson.loads(got.stdout), **{
            k: v for k, v in cacheless_stats(project).items() if k != "open_by_priority"}}
        assert orjson.loads(got.stdout)["done"] == 1
        pending = aidp(project, "tasks", "list", "--status", "pending", "--format", "ids")
        assert "task_1700000000_000000c8" not in pending.stdout.split()
        assert "task_1700000000_000003e9" in pending.stdout.split()


def test_an_in_place_rewrite_that_grew_is_never_trusted(project: Path) -> None:
    """The same inode, grown, one line changed in the middle: the case the old sampled
    check let through whenever the change fell between its 4 KB windows."""
    log = TaskLog(project)
    log.ensure_dir()
    base = big_log(2000)
    log.path.write_bytes(base)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loader, "RACY_NS", 0)  # vouched at once, as a read later would be
        store.load(log)
    middle = task(1234)
    with open(log.path, "r+b") as handle:
        handle.write(base.replace(middle, middle.replace(b'"pending"', b'"done"   '))
                     + task(5000))
    result = aidp(project, "tasks", "stats", "--json")
    assert result.returncode == 0, result.stderr
    stats = orjson.loads(result.stdout)
    assert (stats["done"], stats["pending"], stats["total"]) == (1, 2000, 2001)


# --- crashes -------------------------------------------------------------------------------


def test_a_rewrite_in_place_during_a_read_is_an_error_not_sigbus(project: Path) -> None:
    """The log used to be mmapped: `cp backup tasklist.jsonl` or `> file` while a read
    decoded tasks killed it with SIGBUS (exit 135, no message). Closed tasks are read
    from their lines: an error that says so; open ones from their rows in the store, as
    the file was when the read checked it."""
    log = TaskLog(project)
    log.ensure_dir()
    log.path.write_bytes(big_log() + b"".join(task(n, "done") for n in range(400, 450)))
    fold = store.load(log)
    pending = log.full_fold().select(("pending",))
    with open(log.path, "r+b") as handle:
        handle.truncate(0)  # `> .aidp/tasklist.jsonl`
    from aidp.core.errors import StorageError

    with pytest.raises(StorageError, match="rewritten by another program while it was read"):
        fold.select(("done",))
    assert fold.select(("pending",)) == pending


def test_concurrent_in_place_rewrites_never_kill_a_reader(project: Path) -> None:
    log = TaskLog(project)
    log.ensure_dir()
    data = big_log(3000)
    log.path.write_bytes(data)
    assert aidp(project, "tasks", "stats").returncode == 0  # the store exists
    stop = time.monotonic() + 4
    rewriter = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        data = open({str(log.path)!r}, "rb").read()
        while time.monotonic() < {stop}:
            with open({str(log.path)!r}, "r+b") as f:
                f.truncate(0)
                f.write(data)
    """)])
    try:
        runs = 0
        while time.monotonic() < stop:
            result = aidp(project, "tasks", "list", "--all", "--json")
            runs += 1
            assert result.returncode in (0, 1), (result.returncode, result.stderr[-500:])
            assert "Traceback" not in result.stderr
            if result.returncode == 1:
                assert "while it was read" in result.stderr
    finally:
        rewriter.wait(timeout=IN_A_MINUTE)
    assert runs >= 1


@pytest.mark.parametrize("name", [store.NAME, "log.stamp"])
def test_a_fifo_in_the_cache_never_hangs_a_command(project: Path, name: str) -> None:
    log = TaskLog(project)
    log.ensure_dir()
    log.path.write_bytes(big_log())
    (project / ".aidp" / store.CACHE_DIR).mkdir()
    os.mkfifo(project / ".aidp" / store.CACHE_DIR / name)
    listed = aidp(project, "tasks", "list", "--format", "ids", timeout=IN_A_MINUTE)
    assert listed.returncode == 0 and len(listed.stdout.split()) == 400
    done = aidp(project, "tasks", "done", "task_1700000000_00000007")
    assert done.returncode == 0, done.stderr
    assert "task_1700000000_00000007" not in aidp(
        project, "tasks", "list", "--format", "ids").stdout


def test_a_fifo_at_the_lock_path_is_refused_not_waited_on(project: Path) -> None:
    log = TaskLog(project)
    log.ensure_dir()
    log.path.write_bytes(task(1))
    os.mkfifo(log.lock_path)
    assert aidp(project, "tasks", "list").returncode == 0  # reads take no lock
    added = aidp(project, "tasks", "add", "x")
    assert added.returncode == 1
    assert "tasklist.jsonl.lock: it is not a regular file" in added.stderr
    assert log.path.read_bytes() == task(1)


# --- compact --------------------------------------------------------------------------------


def test_compact_keeps_typed_records_without_an_id(project: Path) -> None:
    """Records of a kind a newer version writes may carry no id: compact cannot fold
    them, so it keeps every one, in place, and its report counts them."""
    log = TaskLog(project)
    log.ensure_dir()
    future = [orjson.dumps({"type": "future_kind", "n": n}) + b"\n" for n in range(3)]
    log.path.write_bytes(task(1) + future[0] + task(1, "done", stamp=5) + future[1]
                         + future[2] + task(2))
    result = aidp(project, "tasks", "compact", "--json")
    assert result.returncode == 0, result.stderr
    report = orjson.loads(result.stdout)
    assert (report["lines"], report["kept"], report["unknown"]) == (6, 5, 3)
    assert log.path.read_bytes() == (future[0] + task(1, "done", stamp=5) + future[1]
                                     + future[2] + task(2))
    human = aidp(project, "tasks", "compact")
    assert human.stdout.startswith("Already compact: 5 records (3 of kinds")


# --- dates -----------------------------------------------------------------------------------


@pytest.mark.parametrize("zone", ["UTC", "Pacific/Kiritimati", "Etc/GMT+12"])
@pytest.mark.parametrize("since", ["0001-01-01", "0001-01-01T00:00:00", "9999-12-31",
                                   "9999-12-31T23:59:59.999999", "0001-01-01T00:00:00+14:00"])
def test_extreme_dates_are_answered_in_every_zone(project: Path, zone: str,
                                                 since: str) -> None:
    log = TaskLog(project)
    log.ensure_dir()
    log.path.write_bytes(task(1) + task(2, created_at="0001-01-02T12:00:00+14:00")
                         + task(3, created_at="9999-12-31T23:59:59.999999-12:00"))
    result = aidp(project, "tasks", "list", "--since", since, TZ=zone)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    if since.startswith("0001"):
        assert len(aidp(project, "tasks", "list", "--since", since, "--format", "ids",
                        TZ=zone).stdout.split()) == 3
    for command in (["tasks", "list"], ["tasks", "show", "task_1700000000_00000003"],
                    ["tasks", "stats"]):
        shown = aidp(project, *command, TZ=zone)
        assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr


# --- readers never wait; writers wait a bounded time -------------------------------------------


HOLDER = """
import fcntl, os, signal, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0)
os.pwrite(fd, f"{os.getpid()}\\n".encode(), 0)
if len(sys.argv) > 2:  # a writer stopped half-way through its line
    with open(sys.argv[2], "ab") as log:
        log.write(b'{"id": "task_1700000000_0000ffff", "desc')
print("held", flush=True)
os.kill(os.getpid(), signal.SIGSTOP)  # a stopped writer: it holds the lock forever
"""


@pytest.fixture
def stopped_writer(project: Path):
    log = TaskLog(project)
    log.ensure_dir()
    log.path.write_bytes(big_log())

    def start(*, half_line: bool = False) -> subprocess.Popen[str]:
        argv = [sys.executable, "-c", HOLDER, str(log.lock_path)]
        if half_line:
            argv.append(str(log.path))
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        procs.append(proc)
        return proc

    procs: list[subprocess.Popen[str]] = []
    yield start
    for proc in procs:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=IN_A_MINUTE)


def test_a_stopped_writer_blocks_no_reader(project: Path, stopped_writer) -> None:
    stopped_writer(half_line=True)
    for args in (["tasks", "list", "--format", "ids"], ["tasks", "stats", "--json"],
                 ["tasks", "show", "task_1700000000_00000001"]):
        result = aidp(project, *args, timeout=20)
        assert result.returncode == 0, result.stderr
        assert "damaged" not in result.stderr  # the half line is being written, not damage
    assert len(aidp(project, "tasks", "list", "--format", "ids").stdout.split()) == 400


def test_a_writer_times_out_naming_the_holder(project: Path, stopped_writer) -> None:
    holder = stopped_writer()
    before = (project / ".aidp" / "tasklist.jsonl").read_bytes()
    for args, env in ((["--lock-timeout", "0.5", "tasks", "add", "x"], {}),
                      (["tasks", "done", "task_1700000000_00000001"],
                       {"AIDP_LOCK_TIMEOUT": "0.5"})):
        result = aidp(project, *args, timeout=20, **env)
        assert result.returncode == 1, result.stderr
        assert f"held by process {holder.pid}" in result.stderr
        assert "Timed out after 0.5s waiting for the lock" in result.stderr
        assert "--lock-timeout" in result.stderr and "Traceback" not in result.stderr
    assert (project / ".aidp" / "tasklist.jsonl").read_bytes() == before


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf"])
def test_a_bad_lock_timeout_is_bad_usage(project: Path, value: str) -> None:
    flag = aidp(project, "--lock-timeout", value, "tasks", "add", "x")
    assert flag.returncode == 2
    assert f"Invalid --lock-timeout '{value}'" in flag.stderr
    env = aidp(project, "tasks", "add", "x", AIDP_LOCK_TIMEOUT=value)
    assert env.returncode == 2 and f"Invalid AIDP_LOCK_TIMEOUT '{value}'" in env.stderr
    assert not (project / ".aidp").exists()


def test_a_torn_line_nobody_is_writing_is_still_damage(project: Path) -> None:
    log = TaskLog(project)
    log.ensure_dir()
    log.path.write_bytes(big_log() + b'{"id": "task_1700000000_0000ffff", "desc')
    fd = os.open(log.lock_path, os.O_RDWR | os.O_CREAT)
    try:
        result = aidp(project, "tasks", "list", "--format", "ids")
        assert "skipped 1 damaged line" in result.stderr
        fcntl.flock(fd, fcntl.LOCK_EX)  # now a writer holds the lock: its line is in progress
        result = aidp(project, "tasks", "list", "--format", "ids")
        assert result.returncode == 0 and "damaged" not in result.stderr
    finally:
        os.close(fd)


# --- unclear errors ------------------------------------------------------------------------------


def test_a_dangling_aidp_link_is_named_as_such(project: Path) -> None:
    (project / ".aidp").symlink_to(project / "gone")
    result = aidp(project, "tasks", "add", "x")
    assert result.returncode == 1
    assert "it is a symbolic link to" in result.stderr and "gone" in result.stderr
    assert "File exists" not in result.stderr


def test_an_unwritable_gitignore_is_blamed_not_the_folder(project: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """An immutable .aidp/ without .gitignore (chattr +i; root ignores permission bits,
    so the refusal is simulated): the message names the file that could not be made."""
    (project / ".aidp").mkdir()
    real_open = os.open

    def refusing_open(path, flags, *args, **kwargs):
        if str(path).endswith(".gitignore"):
            raise PermissionError(1, "Operation not permitted")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    from aidp.core.errors import StorageError

    with pytest.raises(StorageError, match=r"Cannot create .*\.aidp/\.gitignore: Operation"):
        TaskLog(project).ensure_dir()


# --- what is shown --------------------------------------------------------------------------------


def test_future_dated_tasks_do_not_show_as_today(cli, project: Path) -> None:
    log = TaskLog(project)
    log.ensure_dir()
    ahead = format_ts(int(time.time() * 1_000_000) + 3 * 86400 * 1_000_000 + 10**7)
    log.path.write_bytes(task(1, created_at=ahead))
    out = cli("tasks", "list").out
    assert "(3d in the future)" in out and "today" not in out


def test_a_huge_foreign_description_is_clipped_for_people_only(cli, project: Path) -> None:
    log = TaskLog(project)
    log.ensure_dir()
    log.path.write_bytes(task(1, description="x" * 10_000_000))
    listed = cli("tasks", "list")
    assert listed.code == 0 and len(listed.out) < 2000
    assert "10,000,000 characters; --json shows all" in listed.out
    shown = cli("tasks", "show", "task_1700000000_00000001")
    assert shown.code == 0 and len(shown.out) < 5000
    full = orjson.loads(cli("tasks", "show", "task_1700000000_00000001", "--json").out)
    assert len(full["description"]) == 10_000_000


@pytest.mark.parametrize("ref", ["task_1", "task_1700000000_", "task_1700000000_000"])
def test_ids_shorter_than_the_four_digit_rule_name_nothing(cli, project: Path,
                                                           ref: str) -> None:
    log = TaskLog(project)
    log.ensure_dir()
    log.path.write_bytes(task(1))
    result = cli("tasks", "show", ref)
    # ... and the error says the rule (aidp.backlog.tasks.ID_RULE).
    assert (result.code, result.err.strip()) == (
        1, f"Error: Task not found: {ref} (an id is the full id, or at least 4 leading "
           "characters of the hex part after its last '_': ca35, task_1795314333_ca35)")
    assert cli("tasks", "show", "task_1700000000_0000").code == 0


# --- durability ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("setting", "synced"), [("1", True), ("0", False), ("", False)])
def test_aidp_fsync_syncs_every_append(project: Path, monkeypatch: pytest.MonkeyPatch,
                                       setting: str, synced: bool) -> None:
    calls: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real_fsync(fd))[1])
    monkeypatch.setenv("AIDP_FSYNC", setting)
    log = TaskLog(project)
    log.append([orjson.loads(task(1))])
    assert bool(calls) is synced
    assert log.path.read_bytes() == task(1)


# --- a screenful for people ---------------------------------------------------------------------


def test_human_list_on_a_terminal_shows_a_screenful(project: Path) -> None:
    """335k open tasks used to scroll past: at a terminal, `list` shows what fits and
    says how many more; a pipe, --all and --limit still get everything."""
    import pty

    log = TaskLog(project)
    log.ensure_dir()
    log.path.write_bytes(b"".join(task(n) for n in range(100)))
    main, secondary = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "aidp", "tasks", "list"],
                              env=child_env(project, LINES="30", COLUMNS="200", NO_COLOR="1"),
                              stdout=secondary, stderr=subprocess.PIPE, timeout=IN_A_MINUTE)
        os.close(secondary)
        out = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(main)
    text = out.decode()
    assert proc.returncode == 0, proc.stderr
    assert text.count("] task number ") == 24 and "… and 76 more" in text
    piped = aidp(project, "tasks", "list")
    assert piped.stdout.count("] task number ") == 100 and "more" not in piped.stdout
