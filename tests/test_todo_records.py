"""TODO lists stored item by item: small records, merges that keep both sides' changes,
and clones that agree whatever order they merged in."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aidp import todos
from aidp.agent import continuation
from aidp.core.errors import InvalidInput
from aidp.tasklist.log import TaskLog
from aidp.todos import writer


def lines(log: TaskLog) -> list[bytes]:
    return log.path.read_bytes().splitlines() if log.path.exists() else []


def union(ours: TaskLog, theirs: TaskLog) -> None:
    """What git's union merge leaves: our lines, then theirs that we do not have."""
    mine = lines(ours)
    have = set(mine)
    ours.path.parent.mkdir(parents=True, exist_ok=True)
    ours.path.write_bytes(b"".join(x + b"\n" for x in mine + [x for x in lines(theirs)
                                                               if x not in have]))


def contents(todo: todos.TodoList) -> list[tuple]:
    return [(i["content"], todos.derived_status(i),
             [(s["content"], s["status"]) for s in i["subtasks"]]) for i in todo.visible]


def planned(log: TaskLog, session: str = "s", n: int = 3) -> None:
    for k in range(1, n + 1):
        todos.change(log, session, lambda t, k=k: todos.add(t, "last", f"item {k}")[0])


def test_a_tick_appends_one_small_line(tmp_path: Path) -> None:
    log = TaskLog(tmp_path / "a")
    planned(log, n=50)
    todos.change(log, "s", lambda t: todos.add(t, "1.last", "x" * 200)[0])
    for position in ("37", "1.1"):
        before = log.path.read_bytes()
        todos.change(log, "s", lambda t, p=position: todos.tick(t, p)[0])
        added = log.path.read_bytes()[len(before):]
        assert added.count(b"\n") == 1 and len(added) <= 1024, added
        record = orjson.loads(added)
        assert record["type"] == "todo_item" and record["status"] == "completed"
    assert todos.derived_status(todos.current(log.read(), "s").items[0]) == "completed"


def test_the_worst_case_tick_is_under_a_kilobyte(tmp_path: Path) -> None:
    log = TaskLog(tmp_path / "a")
    wide = "𝔘" * 200  # 4 bytes each in UTF-8
    todos.change(log, "a session with a long name@someone@example.com",
                 lambda t: todos.add(t, "last", wide, priority="high")[0])
    before = log.path.read_bytes()
    todos.change(log, "a session with a long name@someone@example.com",
                 lambda t: todos.tick(t, "1")[0])
    assert len(log.path.read_bytes()) - len(before) <= 1024


def test_a_ten_item_plan_worked_through_stays_small(tmp_path: Path) -> None:
    log = TaskLog(tmp_path / "a")
    plan = [{"content": f"Step {k} of the work", "status": "pending"} for k in range(10)]
    todos.change(log, "s", lambda t: todos.set_plan(t, plan))
    for k in range(10):
        plan[k]["status"] = "in_progress"
        todos.change(log, "s", lambda t: todos.set_plan(t, [dict(p) for p in plan]))
        plan[k]["status"] = "completed"
        todos.change(log, "s", lambda t: todos.set_plan(t, [dict(p) for p in plan]))
    assert len(lines(log)) == 1 + 10 + 20  # the head, the plan, one line per step change
    assert log.path.stat().st_size < 8_000  # was 29 full snapshots, ~45 KB


def test_edits_of_different_items_on_two_clones_both_survive(tmp_path: Path) -> None:
    a, b = TaskLog(tmp_path / "a"), TaskLog(tmp_path / "b")
    planned(a)
    union(b, a)
    todos.change(a, "s", lambda t: todos.tick(t, "1")[0])
    todos.change(a, "s", lambda t: todos.add(t, "2", "from a")[0])
    todos.change(b, "s", lambda t: todos.start(t, "3")[0])
    todos.change(b, "s", lambda t: todos.add(t, "last", "from b")[0])
    todos.change(b, "s", lambda t: todos.delete(t, "2")[0])
    union(a, b)
    union(b, a)
    expected = [("item 1", "completed", []), ("from a", "pending", []),
                ("item 3", "in_progress", []), ("from b", "pending", [])]
    assert contents(todos.current(a.read(), "s")) == expected
    assert contents(todos.current(b.read(), "s")) == expected


def test_the_same_item_on_both_clones_the_later_change_wins(tmp_path: Path, monkeypatch) -> None:
    a, b = TaskLog(tmp_path / "a"), TaskLog(tmp_path / "b")
    planned(a)
    union(b, a)
    todos.change(b, "s", lambda t: todos.start(t, "2")[0])
    todos.change(a, "s", lambda t: todos.tick(t, "2")[0])  # later
    union(a, b)
    union(b, a)
    for log in (a, b):
        assert todos.derived_status(todos.current(log.read(), "s").items[1]) == "completed"
    # The same instant on both (a lagging clock bumps both to one µs): still one answer.
    stamp = writer.now_micros() + 10**9
    monkeypatch.setattr(writer, "now_micros", lambda: stamp)
    todos.change(a, "s", lambda t: todos.start(t, "3")[0])
    todos.change(b, "s", lambda t: todos.tick(t, "3")[0])
    union(a, b)
    union(b, a)
    assert contents(todos.current(a.read(), "s")) == contents(todos.current(b.read(), "s"))


def test_an_old_snapshot_is_read_and_changed_item_by_item(tmp_path: Path) -> None:
    log = TaskLog(tmp_path / "a")
    old = todos.add(todos.TodoList("s"), "last", "kept")[0]
    old = todos.add(old, "last", "also kept")[0]
    log.append([todos.to_record(old, "2026-01-01T00:00:00.000000Z")])
    assert contents(todos.current(log.read(), "s")) == [("kept", "pending", []),
                                                       ("also kept", "pending", [])]
    todos.change(log, "s", lambda t: todos.tick(t, "2")[0])
    assert contents(todos.current(log.read(), "s")) == [("kept", "pending", []),
                                                       ("also kept", "completed", [])]
    # Two clones that upgrade the same snapshot name its generation alike.
    other = TaskLog(tmp_path / "b")
    other.append([todos.to_record(old, "2026-01-01T00:00:00.000000Z")])
    todos.change(other, "s", lambda t: todos.start(t, "1")[0])
    union(log, other)
    union(other, log)
    assert contents(todos.current(log.read(), "s")) == [("kept", "in_progress", []),
                                                       ("also kept", "completed", [])]
    assert contents(todos.current(other.read(), "s")) == contents(todos.current(log.read(), "s"))


def test_a_newer_snapshot_from_an_older_version_wins_whole(tmp_path: Path) -> None:
    log = TaskLog(tmp_path / "a")
    planned(log)
    snapshot = todos.add(todos.TodoList("s"), "last", "written by an old aidp")[0]
    log.append([todos.to_record(snapshot, "2999-01-01T00:00:00.000000Z")])
    assert contents(todos.current(log.read(), "s")) == [("written by an old aidp", "pending", [])]


def test_ranks_sort_between_their_neighbours() -> None:
    low = None
    ranks = []
    for _ in range(100):
        low = todos.rank_between(low, None)
        ranks.append(low)
    assert ranks == sorted(ranks) and len(set(ranks)) == 100 and len(ranks[-1]) <= 4
    for lo, hi in [(None, "1"), ("1", "2"), ("1", "11"), ("z", "z1"), ("a", "b"), (None, "001")]:
        mid = todos.rank_between(lo, hi)
        assert (lo or "") < mid < hi and not mid.endswith("0"), (lo, hi, mid)


# --- convergence: random edits on N clones, random merges ------------------------------

ops = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(["1", "2", "last", "1.1", "1.last", "2.last"])),
    st.tuples(st.just("tick"), st.sampled_from(["1", "2", "3", "last", "1.1", "2.1"])),
    st.tuples(st.just("delete"), st.sampled_from(["1", "2", "last", "1.1"])),
    st.tuples(st.just("start"), st.sampled_from(["1", "2", "last"])),
    st.tuples(st.just("clear"), st.just("")),
    st.tuples(st.just("pause"), st.just("")),
    st.tuples(st.just("prompt"), st.just("")),
    st.tuples(st.just("plan"), st.sampled_from(["a", "ab", "ba", ""])),
    st.tuples(st.just("load"), st.just("")),
)
steps = st.lists(
    st.tuples(st.integers(0, 2), st.one_of(ops, st.tuples(st.just("merge"), st.integers(0, 2))),
              st.integers(0, 3)),
    max_size=25,
)


def apply(todo: todos.TodoList, op: str, arg: str, n: int) -> todos.TodoList | None:
    if op == "add":
        return todos.add(todo, arg, f"text {n}")[0]
    if op == "tick":
        return todos.tick(todo, arg)[0]
    if op == "delete":
        return todos.delete(todo, arg)[0]
    if op == "start":
        return todos.start(todo, arg)[0]
    if op == "clear":
        return todos.clear(todo)
    if op == "pause":
        return todos.pause(todo, f"reason {n}")
    if op == "prompt":
        return continuation.on_user_prompt(todo)
    if op == "plan":
        return todos.set_plan(todo, [{"content": c, "status": "pending"} for c in arg])
    return todos.load(todo, todo)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps, st.permutations(range(3)))
def test_all_clones_fold_to_the_same_list_whatever_the_merge_order(tmp_path_factory, monkeypatch,
                                                                   plan, final_order):
    base = tmp_path_factory.mktemp("clones")
    clones = [TaskLog(base / f"c{k}") for k in range(3)]
    seed = todos.add(todos.add(todos.TodoList("s"), "last", "seed one")[0], "last", "seed two")[0]
    for log in clones:  # a common history written by an older version
        log.append([todos.to_record(seed, "2026-01-01T00:00:00.000000Z")])
    clock = [1_800_000_000_000_000]
    monkeypatch.setattr(writer, "now_micros", lambda: clock[0])
    for number, (k, (op, arg), tick) in enumerate(plan):
        clock[0] += tick  # 0: the same instant on several clones
        if op == "merge":
            union(clones[k], clones[arg])
            continue
        try:
            todos.change(clones[k], "s", lambda t, op=op, arg=arg, n=number: apply(t, op, arg, n))
        except InvalidInput:
            pass  # a position this clone's list does not have: nothing written
    for k in final_order:  # everyone merges everyone, in some order
        for j in final_order:
            union(clones[k], clones[j])
    for k in reversed(final_order):
        for j in final_order:
            union(clones[k], clones[j])
    folded = [todos.current(log.read(), "s") for log in clones]
    shapes = [(t.active, t.paused, t.pause_reason, [todos.item_out(i) for i in t.items])
              for t in folded]
    assert shapes[0] == shapes[1] == shapes[2]


@pytest.mark.parametrize("session", ["s", "x@y:z/w"])
def test_sessions_with_any_name_keep_their_items(tmp_path: Path, session: str) -> None:
    log = TaskLog(tmp_path / "a")
    planned(log, session)
    planned(log, "other", 1)
    assert [i["content"] for i in todos.current(log.read(), session).items] == [
        "item 1", "item 2", "item 3"]
    assert sorted(t.session for t in todos.all_lists(log.read())) == sorted([session, "other"])


def test_a_session_s_list_is_read_without_walking_the_other_typed_records(log: TaskLog,
                                                                         monkeypatch) -> None:
    # Every hook reads its session's TODO list: the store finds the TODO kinds' rows in
    # its typed_kind index, where it walked every typed row (an import's source record
    # per task: ~20 M instructions a hook at 10k tasks). Counted in SQLite's steps, not in
    # time: the same with 300 other records as with 3,000.
    from aidp import store
    from aidp.store import loader

    monkeypatch.setattr(loader, "MIN_BYTES", 0)
    planned(log, "s", 2)

    def others(start: int, stop: int) -> None:
        log.append([{"type": "import_source", "id": f"import_source:taskwarrior:{n:05d}",
                     "task": f"task_1795000000_{n:08x}", "updated_at": "2026-01-01T00:00:00Z"}
                    for n in range(start, stop)])

    def steps_to_read() -> int:
        fold = store.load(log)
        assert isinstance(fold, store.StoreFold)
        steps: list[int] = []
        fold.db.set_progress_handler(lambda: steps.append(1), 100)
        assert [i["content"] for i in todos.current(fold, "s").items] == ["item 1", "item 2"]
        fold.db.set_progress_handler(None, 0)
        return len(steps)

    others(0, 300)
    few = steps_to_read()
    others(300, 3000)
    many = steps_to_read()
    assert many <= few + 2 and many < 30, (few, many)  # every row walked: 61, 601
