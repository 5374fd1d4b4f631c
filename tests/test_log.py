"""The event log: fold rule, damage tolerance, appends under the lock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from aidp.core.model import TASK_KEY_ORDER, format_ts, new_task, transition
from aidp.tasklist import maintenance
from aidp.tasklist.fields import fold_bytes
from aidp.tasklist.log import Fold, TaskLog, encode


def task(tid: str, status: str, updated: int, **extra: object) -> dict:
    return {
        "id": tid,
        "description": f"task {tid}",
        "status": status,
        "priority": "medium",
        "created_at": format_ts(0),
        "updated_at": format_ts(updated),
        "tags": [],
        **extra,
    }


def fold_of(records: list[dict]) -> Fold:
    return fold_bytes(encode(records))


def test_greatest_updated_at_wins_regardless_of_line_order() -> None:
    newer = task("a", "done", 2_000_000)
    older = task("a", "pending", 1_000_000)
    assert fold_of([newer, older]).tasks["a"]["status"] == "done"
    assert fold_of([older, newer]).tasks["a"]["status"] == "done"


def test_equal_updated_at_later_line_wins() -> None:
    first = task("a", "pending", 5)
    second = task("a", "in_progress", 5)
    assert fold_of([first, second]).tasks["a"]["status"] == "in_progress"
    assert fold_of([second, first]).tasks["a"]["status"] == "pending"


def test_offsets_are_compared_as_instants_not_strings() -> None:
    # 12:00+09:00 is 03:00Z: earlier than 04:00Z although the string sorts later.
    tokyo = {**task("a", "done", 0), "updated_at": "2026-11-22T12:00:00+09:00"}
    utc = {**task("a", "pending", 0), "updated_at": "2026-11-22T04:00:00.000000Z"}
    assert fold_of([utc, tokyo]).tasks["a"]["status"] == "pending"


def test_typed_records_fold_apart_from_tasks() -> None:
    todo = {"type": "todo_list", "id": "todo_list:main", "session": "main", "items": [],
            "active": True, "paused": False, "updated_at": format_ts(1)}
    fold = fold_of([task("a", "pending", 1), todo])
    assert list(fold.tasks) == ["a"]
    assert fold.typed["todo_list:main"]["session"] == "main"


def test_unknown_keys_survive_a_transition() -> None:
    original = {**new_task("x"), "estimate": {"hours": 3}, "assignee": "ana"}
    updated = transition(original, "done")
    assert updated["estimate"] == {"hours": 3}
    assert updated["assignee"] == "ana"
    assert updated["completed_at"] == updated["updated_at"]


def test_writer_beats_a_lagging_clock() -> None:
    future = {**new_task("x"), "updated_at": "2999-01-01T00:00:00.000000Z"}
    updated = transition(future, "done")
    assert updated["updated_at"] == "2999-01-01T00:00:00.000001Z"
    assert fold_of([future, updated]).tasks[future["id"]]["status"] == "done"


DAMAGE = [
    b"{not json",
    b'{"id": "task_1_abcdabcd", "description": "torn',
    b"<<<<<<< HEAD",
    b"=======",
    b"||||||| base",
    b">>>>>>> feature",
    b"[1, 2, 3]",
    b'"a string"',
    b"\xff\xfe\x00garbage",
    b"[" * 5000 + b"]" * 5000,
]


@pytest.mark.parametrize("bad", DAMAGE)
def test_damaged_lines_are_counted_and_skipped(bad: bytes) -> None:
    good = encode([task("a", "pending", 1), task("b", "done", 2)])
    first, second = good.splitlines(keepends=True)
    fold = fold_bytes(first + bad + b"\n" + b"\n   \n" + second)
    assert set(fold.tasks) == {"a", "b"}
    assert fold.damaged == 1  # blank lines are not damage


def test_conflict_keeps_both_sides() -> None:
    ours = task("a", "done", 3)
    theirs = task("b", "pending", 2)
    base = task("a", "pending", 1)
    data = (
        encode([base])
        + b"<<<<<<< HEAD\n"
        + encode([ours])
        + b"=======\n"
        + encode([theirs])
        + b">>>>>>> other\n"
    )
    fold = fold_bytes(data)
    assert fold.tasks["a"]["status"] == "done"
    assert fold.tasks["b"]["status"] == "pending"
    assert fold.damaged == 3


def test_torn_last_line_gets_a_newline_before_the_next_append(log: TaskLog) -> None:
    log.dir.mkdir()
    log.path.write_bytes(encode([task("a", "pending", 1)]) + b'{"id": "task_9_dead')
    log.append([task("b", "pending", 2)])
    lines = log.path.read_bytes().split(b"\n")
    assert lines[1] == b'{"id": "task_9_dead'
    assert orjson.loads(lines[2])["id"] == "b"
    fold = log.read()
    assert set(fold.tasks) == {"a", "b"}
    assert fold.damaged == 1


def test_reading_creates_nothing(project: Path) -> None:
    assert TaskLog(project).read().tasks == {}
    assert not (project / ".aidp").exists()


def test_first_write_creates_dir_file_and_gitignore(log: TaskLog) -> None:
    log.append([task("a", "pending", 1)])
    assert log.path.is_file()
    ignore = (log.dir / ".gitignore").read_text()
    patterns = [line for line in ignore.splitlines() if line and not line.startswith("#")]
    assert "*.lock" in patterns and "cache/" in patterns
    assert not any("tasklist.jsonl" in p and not p.endswith(".lock") for p in patterns)


def test_failed_write_leaves_file_exactly_as_it_was(log: TaskLog, monkeypatch: pytest.MonkeyPatch) -> None:
    log.append([task("a", "pending", 1)])
    before = log.path.read_bytes()
    real_write = os.write

    def full_disk(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data)[:10])  # a partial write, then the disk is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    from aidp.core.errors import StorageError

    with pytest.raises(StorageError, match="no space left"):
        log.append([task("b", "pending", 2)])
    monkeypatch.undo()
    assert log.path.read_bytes() == before


def test_repair_drops_damage_keeps_backup_and_state(log: TaskLog) -> None:
    good = encode([task("a", "pending", 1), task("a", "done", 2)])
    original = b"garbage\n" + good + b"\n<<<<<<< HEAD\n"
    log.dir.mkdir()
    log.path.write_bytes(original)
    dry = maintenance.repair(log, dry_run=True)
    assert dry.damaged_lines == [1, 5] and not dry.rewritten
    assert log.path.read_bytes() == original
    report = maintenance.repair(log)
    assert report.rewritten and report.backup is not None
    assert report.backup.read_bytes() == original
    assert log.path.read_bytes() == good
    assert log.read().tasks["a"]["status"] == "done"
    assert log.read().damaged == 0


def test_compact_keeps_winners_only(log: TaskLog) -> None:
    records = [task("a", "pending", 1), task("b", "pending", 2), task("a", "done", 3)]
    log.append(records)
    before = log.read()
    report = maintenance.compact(log)
    assert report.lines_before == 3 and report.lines_after == 2
    after = log.read()
    assert after.tasks == before.tasks
    assert len(log.path.read_bytes().splitlines()) == 2


# --- properties ---------------------------------------------------------------------

ids = st.sampled_from(["a", "b", "c"])
records = st.builds(
    task,
    ids,
    st.sampled_from(["pending", "in_progress", "done", "abandoned"]),
    st.integers(min_value=0, max_value=5),  # few values: many ties
)


def _distinct_per_key(recs: list[dict]) -> bool:
    seen: dict[tuple[str, str], bytes] = {}
    for r in recs:
        key = (r["id"], r["updated_at"])
        body = orjson.dumps(r, option=orjson.OPT_SORT_KEYS)
        if seen.setdefault(key, body) != body:
            return False
    return True


@given(st.lists(records, max_size=12), st.randoms())
def test_fold_is_independent_of_interleaving(recs: list[dict], rnd) -> None:
    """With distinct (id, updated_at) — what writers guarantee — any order folds the same."""
    if not _distinct_per_key(recs):
        return
    shuffled = recs[:]
    rnd.shuffle(shuffled)
    assert fold_of(recs).tasks == fold_of(shuffled).tasks


@given(st.lists(records, max_size=12))
def test_duplicated_lines_fold_to_the_same_state(recs: list[dict]) -> None:
    """A union merge may repeat lines: equal content folds to one."""
    assert fold_of(recs + recs).tasks == fold_of(recs).tasks


text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


# Unknown keys round-trip whatever their values; the known keys have types (see parse_line).
@given(st.dictionaries(st.text(min_size=1, max_size=10).filter(
                           lambda k: k != "type" and k not in TASK_KEY_ORDER),
                       st.recursive(st.none() | st.booleans() | st.integers(-2**53, 2**53) | text,
                                    lambda inner: st.lists(inner, max_size=3)
                                    | st.dictionaries(text, inner, max_size=3), max_leaves=8),
                       max_size=6),
       st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30))
def test_serialise_parse_round_trip(extra: dict, tid: str) -> None:
    record = {**extra, "id": tid, "updated_at": format_ts(7)}
    fold = fold_bytes(encode([record]))
    assert fold.tasks[tid] == record


def test_eight_processes_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "concurrent"
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from aidp.tasklist.log import TaskLog\n"
        "from aidp.backlog import tasks\n"
        "log = TaskLog(Path(sys.argv[1]))\n"
        "for i in range(15):\n"
        "    t = tasks.add(log, f'worker {sys.argv[2]} task {i}')\n"
        "    tasks.set_status(log, [t['id']], 'in_progress')\n"
        "    tasks.set_status(log, [t['id']], 'done')\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(root), str(n)]) for n in range(8)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    log = TaskLog(root)
    fold = log.read()
    assert fold.damaged == 0
    assert len(fold.tasks) == 8 * 15
    assert {t["status"] for t in fold.tasks.values()} == {"done"}
    lines = log.path.read_bytes().splitlines()
    # a task record per change, and each status change's task_fields record before it
    assert len([line for line in lines if b'"task_fields"' not in line]) == 8 * 15 * 3
    assert len(lines) == 8 * 15 * 5


def test_a_held_lock_is_announced_then_the_write_proceeds(project: Path) -> None:
    """A writer blocked by another process says why it waits, and finishes once the
    holder lets go."""
    import fcntl

    (project / ".aidp").mkdir()
    lock = project / ".aidp" / "tasklist.jsonl.lock"
    with open(lock, "w") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        writer = subprocess.Popen(
            [sys.executable, "-m", "aidp", "tasks", "add", "patient", "-q"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        import select

        ready, _, _ = select.select([writer.stderr], [], [], 60)
        if not ready:  # no notice: let the writer go, then fail
            fcntl.flock(holder, fcntl.LOCK_UN)
            writer.communicate(timeout=60)
            pytest.fail("the blocked writer never said it was waiting")
        first = writer.stderr.readline()
        assert first.startswith(f"Waiting for {lock}: another process holds it")
        assert writer.poll() is None  # still waiting while the lock is held
    out, _err = writer.communicate(timeout=60)
    assert writer.returncode == 0 and out.startswith("task_")


def test_the_fast_task_check_accepts_exactly_what_the_type_rules_do() -> None:
    """line.well_typed_task is one pass over the values, for speed: it must say what the
    plain rules say (text keys: a string or absent/null; tags: a list of strings, or one
    string: a single tag, issue 14)."""
    from aidp.tasklist.line import parse_line, well_typed_task

    good = {"id": "task_1_00000001", "description": "x", "status": "pending", "tags": []}
    assert well_typed_task(good)
    assert well_typed_task({**good, "tags": None, "session": None, "extra": 5})
    assert well_typed_task({**good, "tags": "one,two"})
    assert parse_line(orjson.dumps({**good, "tags": "one,two"}))["tags"] == ["one,two"]
    assert parse_line(orjson.dumps({**good, "tags": " "}))["tags"] == []
    for bad in ({"tags": [1]}, {"tags": {"a": 1}}, {"status": ["x"]},
                {"description": 5}, {"updated_at": 12}, {"id": ""}, {"id": 7},
                {"id": "task_\x1b[31m"}, {"id": "task_\u0085"}):
        assert not well_typed_task({**good, **bad}), bad


def test_writes_open_without_following_links() -> None:
    # The flag every write under .aidp/ uses: a typo in its name would silently make it
    # 0, and a planted link would receive the line (test_hostile_input checks the effect).
    import os

    from aidp.tasklist import files

    assert files.NOFOLLOW == os.O_NOFOLLOW != 0


@pytest.mark.parametrize("freeze", [True, False])
def test_a_read_freezes_what_it_folds_only_when_the_log_says_so(tmp_path: Path,
                                                                  freeze: bool) -> None:
    """TaskLog(freeze=True), the one-shot CLI's: what a read folds is moved out of the
    collector's sight (gc.freeze); a long-running process's log (freeze=False) never
    freezes anything. In a process of its own: a freeze lasts as long as its process."""
    log = TaskLog(tmp_path)
    log.append([task(f"t{n}", "pending", n) for n in range(50)])
    script = ("import gc, sys; from pathlib import Path; from aidp.tasklist.log import TaskLog\n"
              "log = TaskLog(Path(sys.argv[1]), freeze=sys.argv[2] == 'True')\n"
              "before = gc.get_freeze_count(); fold = log.read()\n"
              "print(len(fold.tasks), gc.get_freeze_count() > before)\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path), str(freeze)],
                          capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["50", str(freeze)]
