"""Convergence under git: clones that diverge and merge end up agreeing, losing nothing.

Real git repositories. A project is set up with `aidp init` (which writes
`.aidp/tasklist.jsonl merge=union` to .gitattributes) and pushed to a bare origin;
several clones each work on their own branch: random `tasks` add/start/done/abandon/
reopen, `todo` add/tick on shared and own sessions, the odd `tasks compact`, commits,
merges of each other's branches, and pull (merging or rebasing) and push through
origin, in random orders.
Finally everyone merges everyone. Then, in every clone:
- the folded state (tasks and TODO lists) is identical;
- no id appears twice in `tasks list --all --json`;
- every record is exactly the latest write made to it anywhere: no change is lost
  unless a later change to the same record superseded it;
- a task whose latest abandonment was not followed by an explicit reopen is not
  pending: nothing abandoned comes back by itself;
- no merge ever stopped on a conflict and the file holds no damage.
A second test merges without the union rule, so git writes real conflict markers, and
checks that aidp reads through them, keeps both sides, and repairs.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import examples

from aidp import todos
from aidp.core.model import ts_of
from aidp.tasklist.log import LOG_NAME, TaskLog

TASKLIST = f".aidp/{LOG_NAME}"
SESSIONS = ("shared", "own")


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if check:
        assert result.returncode == 0, f"git {' '.join(args)}: {result.stdout}{result.stderr}"
    return result


def configure(repo: Path, name: str) -> None:
    git(repo, "config", "user.name", name)
    git(repo, "config", "user.email", f"{name}@example.invalid")
    git(repo, "config", "commit.gpgsign", "false")
    git(repo, "config", "pull.rebase", "false")


@dataclass
class World:
    """The origin, the clones, and every write anyone made (the model)."""

    root: Path
    cli: object
    clones: list[Path] = field(default_factory=list)
    # id -> every (updated_at, record, op) written to it, in any clone
    writes: dict[str, list[tuple[int, dict, str]]] = field(default_factory=dict)
    # (task id, updated_at µs) of a status change -> the status its clone saw before it
    seen: dict[tuple[str, int], str] = field(default_factory=dict)
    merges: int = 0

    def aidp(self, clone: int, *args: str):
        return self.cli("--dir", str(self.clones[clone]), *args)

    def record(self, record: dict, op: str) -> None:
        if record.get("type") == "task_fields":
            return  # which fields a change set: folded into its task, not a record of its own
        rid = record["id"]
        entries = self.writes.setdefault(rid, [])
        if all(existing != record for _ts, existing, _op in entries):
            entries.append((ts_of(record), record, op))

    def fold(self, clone: int):
        return TaskLog(self.clones[clone]).read()

    def session(self, clone: int, which: int) -> str:
        return "shared" if SESSIONS[which] == "shared" else f"own-{clone}"

    def branch(self, clone: int) -> str:
        return f"work-{clone}"


def make_world(root: Path, cli, count: int) -> World:
    world = World(root, cli)
    origin = root / "origin.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(origin))
    seed = root / "seed"
    git(root, "init", "-q", "-b", "main", str(seed))
    configure(seed, "seed")
    assert cli("--dir", str(seed), "init").code == 0
    attributes = (seed / ".gitattributes").read_text()
    assert ".aidp/tasklist.jsonl merge=union" in attributes.splitlines()
    git(seed, "add", ".gitattributes", ".aidp/.gitignore", TASKLIST)
    git(seed, "commit", "-q", "-m", "aidp init")
    git(seed, "push", "-q", str(origin), "main")
    for n in range(count):
        clone = root / f"clone{n}"
        git(root, "clone", "-q", str(origin), str(clone))
        configure(clone, f"clone{n}")
        git(clone, "checkout", "-q", "-b", world.branch(n))
        world.clones.append(clone)
    return world


# --- the operations ---------------------------------------------------------------------


def op_add(world: World, clone: int, priority: str) -> None:
    result = world.aidp(clone, "tasks", "add", "--json", "-p", priority, f"from clone {clone}")
    assert result.code == 0, result
    world.record(orjson.loads(result.out), "add")


VERBS = {"start": "in_progress", "done": "done", "abandon": "abandoned", "reopen": "pending"}


def op_set(world: World, clone: int, pick: int, verb: str) -> None:
    tasks = sorted(world.fold(clone).tasks)
    if not tasks:
        return
    tid = tasks[pick % len(tasks)]
    seen = world.fold(clone).tasks[tid]["status"]
    args = ["tasks", verb, "--json", tid] + (["gone stale"] if verb == "abandon" else [])
    result = world.aidp(clone, *args)
    assert result.code == 0, result
    task = orjson.loads(result.out)
    assert task["status"] == VERBS[verb]
    world.record(task, verb)
    world.seen[(tid, ts_of(task))] = seen


def record_appended(world: World, clone: int, before: bytes) -> None:
    """Every record a todo command appended (a list's head, the items it changed)."""
    data = (world.clones[clone] / TASKLIST).read_bytes()
    assert data.startswith(before)
    for line in data[len(before):].splitlines():
        world.record(orjson.loads(line), "todo")


def op_todo_add(world: World, clone: int, which: int) -> None:
    session = world.session(clone, which)
    before = (world.clones[clone] / TASKLIST).read_bytes()
    result = world.aidp(clone, "todo", "add", "--session", session, f"item by clone {clone}")
    assert result.code == 0, result
    record_appended(world, clone, before)


def op_todo_tick(world: World, clone: int, which: int, pick: int) -> None:
    session = world.session(clone, which)
    current = todos.current(world.fold(clone), session)
    if not current.visible:
        return
    position = pick % len(current.visible) + 1
    before = (world.clones[clone] / TASKLIST).read_bytes()
    result = world.aidp(clone, "todo", "tick", "--session", session, str(position))
    assert result.code == 0, result
    record_appended(world, clone, before)


def op_compact(world: World, clone: int) -> None:
    before = world.fold(clone)
    result = world.aidp(clone, "tasks", "compact")
    assert result.code == 0, result
    after = world.fold(clone)
    assert (after.tasks, after.typed) == (before.tasks, before.typed)


def commit(world: World, clone: int) -> None:
    repo = world.clones[clone]
    git(repo, "add", TASKLIST)  # only the tasklist: nothing else is ever staged
    if git(repo, "diff", "--cached", "--quiet", check=False).returncode:
        git(repo, "commit", "-q", "-m", f"tasks from clone {clone}")
    assert git(repo, "status", "--porcelain").stdout == "", "unrelated changes in the work tree"


def op_merge(world: World, clone: int, other: int) -> None:
    """Merge another clone's branch straight from its repository."""
    if clone == other:
        return
    commit(world, clone)
    commit(world, other)
    repo = world.clones[clone]
    git(repo, "fetch", "-q", str(world.clones[other]), world.branch(other))
    merged = git(repo, "merge", "--no-edit", "-q", "FETCH_HEAD", check=False)
    assert merged.returncode == 0, f"merge stopped: {merged.stdout}{merged.stderr}"
    world.merges += 1
    check_clean(world, clone)


def op_sync(world: World, clone: int) -> None:
    """Pull origin's main into the branch, then push the result as the new main."""
    commit(world, clone)
    repo = world.clones[clone]
    pulled = git(repo, "pull", "-q", "--no-edit", "origin", "main", check=False)
    assert pulled.returncode == 0, f"pull stopped: {pulled.stdout}{pulled.stderr}"
    git(repo, "push", "-q", "origin", f"{world.branch(clone)}:main")
    world.merges += 1
    check_clean(world, clone)


def op_rebase_sync(world: World, clone: int) -> None:
    """Rebase the branch onto origin's main (replaying its commits with the union
    rule), then push it as the new main."""
    commit(world, clone)
    repo = world.clones[clone]
    pulled = git(repo, "pull", "-q", "--rebase", "origin", "main", check=False)
    assert pulled.returncode == 0, f"rebase stopped: {pulled.stdout}{pulled.stderr}"
    git(repo, "push", "-q", "origin", f"{world.branch(clone)}:main")
    world.merges += 1
    check_clean(world, clone)


def check_clean(world: World, clone: int) -> None:
    data = (world.clones[clone] / TASKLIST).read_bytes()
    assert b"<<<<<<<" not in data and b">>>>>>>" not in data
    assert world.fold(clone).damaged == 0


def apply(world: World, step: tuple) -> None:
    kind, clone, *rest = step
    clone %= len(world.clones)
    if kind == "add":
        op_add(world, clone, *rest)
    elif kind == "set":
        op_set(world, clone, *rest)
    elif kind == "todo_add":
        op_todo_add(world, clone, *rest)
    elif kind == "todo_tick":
        op_todo_tick(world, clone, *rest)
    elif kind == "compact":
        op_compact(world, clone)
    elif kind == "commit":
        commit(world, clone)
    elif kind == "merge":
        op_merge(world, clone, rest[0] % len(world.clones))
    elif kind == "sync":
        op_sync(world, clone)
    elif kind == "rebase":
        op_rebase_sync(world, clone)


def converge(world: World, order: list[int]) -> None:
    """Everyone merges everyone, twice round in the given order: all changes reach all."""
    for _round in range(2):
        for clone in order:
            for other in order:
                op_merge(world, clone, other)


# --- the checks ---------------------------------------------------------------------------


CLOSED = ("done", "abandoned")


def expected_state(world: World) -> tuple[dict, dict, dict]:
    """Per id, the latest write anywhere; and the op that made it. For a task, its
    status (with its stamps) is the latest status write's, except that a move between
    open states made from an open state never wins over a close it had not seen: then
    the latest of the close and the latest informed write (an add, a reopen) wins."""
    tasks, typed, ops = {}, {}, {}
    for rid, entries in world.writes.items():
        _ts, record, op = max(entries, key=lambda entry: entry[0])
        assert sum(1 for e in entries if e[0] == _ts) == 1, "two writes at the same instant"
        ops[rid] = op
        if "type" in record:
            typed[rid] = record
            continue
        slots: dict[str, tuple[int, dict]] = {}
        for ts, written, _op in entries:
            seen = world.seen.get((rid, ts))
            kind = ("C" if written["status"] in CLOSED else
                    "B" if seen is not None and seen not in CLOSED else "O")
            if kind not in slots or ts > slots[kind][0]:
                slots[kind] = (ts, written)
        chosen = max(slots.values(), key=lambda slot: slot[0])
        if chosen is slots.get("B") and "C" in slots and (
                "O" not in slots or slots["C"][0] > slots["O"][0]):
            chosen = max((slots[k] for k in ("C", "O") if k in slots), key=lambda s: s[0])
        merged = dict(record)
        for key in ("status", "started_at", "completed_at", "abandoned_at", "abandoned_reason"):
            merged.pop(key, None)
            if chosen[1].get(key) is not None:
                merged[key] = chosen[1][key]
        tasks[rid] = merged
    return tasks, typed, ops


def check_converged(world: World) -> None:
    tasks, typed, ops = expected_state(world)
    states = []
    for clone in range(len(world.clones)):
        fold = world.fold(clone)
        assert fold.damaged == 0
        listed = world.aidp(clone, "tasks", "list", "--all", "--json")
        assert listed.code == 0 and listed.err == "", listed
        ids = [t["id"] for t in orjson.loads(listed.out)]
        assert len(ids) == len(set(ids)), "an id appears twice"
        assert set(ids) == set(tasks)
        # nothing lost that was not superseded, nothing stale on top
        assert fold.tasks == tasks
        assert fold.typed == typed
        states.append((fold.tasks, fold.typed))
    assert all(state == states[0] for state in states), "clones disagree"
    for rid, task in tasks.items():
        if task["status"] == "pending":
            assert ops[rid] in ("add", "reopen"), f"{rid} came back as pending by itself"
        abandoned = [ts for ts, rec, _op in world.writes[rid] if rec["status"] == "abandoned"]
        if abandoned and task["status"] != "abandoned":
            later = [op for ts, _rec, op in world.writes[rid] if ts > max(abandoned)]
            assert later, f"{rid} left 'abandoned' without a later change"


# --- the property ------------------------------------------------------------------------

clone_ix = st.integers(0, 3)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("add"), clone_ix, st.sampled_from(["high", "medium", "low"])),
        st.tuples(st.just("set"), clone_ix, st.integers(0, 99),
                  st.sampled_from(["start", "done", "abandon", "reopen"])),
        st.tuples(st.just("todo_add"), clone_ix, st.integers(0, 1)),
        st.tuples(st.just("todo_tick"), clone_ix, st.integers(0, 1), st.integers(0, 99)),
        st.tuples(st.just("commit"), clone_ix),
        st.tuples(st.just("merge"), clone_ix, clone_ix),
        st.tuples(st.just("sync"), clone_ix),
        st.tuples(st.just("rebase"), clone_ix),
        st.tuples(st.just("compact"), clone_ix),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=examples(25, 200), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(count=st.integers(2, 3), script=steps, order=st.permutations(range(3)))
def test_clones_converge_and_lose_nothing(cli, count: int, script: list, order: list) -> None:
    with tempfile.TemporaryDirectory() as folder:
        world = make_world(Path(folder), cli, count)
        for step in script:
            apply(world, step)
        converge(world, [n for n in order if n < count])
        check_converged(world)


# --- conflicts from a merge without the union rule ---------------------------------------


def test_real_conflict_markers_are_read_through_and_repaired(cli, tmp_path: Path) -> None:
    world = make_world(tmp_path, cli, 2)
    for clone in (0, 1):
        # This clone's git does not know the union rule (say, .gitattributes was lost).
        (world.clones[clone] / ".git" / "info").mkdir(exist_ok=True)
        (world.clones[clone] / ".git" / "info" / "attributes").write_text(
            ".aidp/tasklist.jsonl merge\n")  # the plain 3-way text merge
        git(world.clones[clone], "config", "merge.conflictstyle", "diff3")
    op_add(world, 0, "high")
    op_add(world, 1, "low")
    op_add(world, 1, "medium")
    op_set(world, 1, 0, "abandon")
    commit(world, 0)
    commit(world, 1)
    repo = world.clones[0]
    git(repo, "fetch", "-q", str(world.clones[1]), world.branch(1))
    merged = git(repo, "merge", "--no-edit", "FETCH_HEAD", check=False)
    assert merged.returncode != 0 and "CONFLICT" in merged.stdout
    data = (repo / TASKLIST).read_bytes()
    assert data.count(b"<<<<<<<") == 1 and data.count(b"=======") == 1

    # reads work and see both sides; the warning names the count and the way out
    listed = world.aidp(0, "tasks", "list", "--all", "--json")
    assert listed.code == 0, listed
    tasks, _typed, _ops = expected_state(world)
    assert {t["id"]: t for t in orjson.loads(listed.out)} == tasks
    markers = sum(data.count(m) for m in (b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>"))
    assert f"skipped {markers} damaged lines" in listed.err and "aidp tasks repair" in listed.err

    # writes keep working in the middle of the conflict
    op_add(world, 0, "low")
    op_set(world, 0, 1, "done")
    # resolving by committing the file as it is loses nothing either
    git(repo, "add", TASKLIST)
    git(repo, "commit", "-q", "--no-edit")
    repaired = world.aidp(0, "tasks", "repair")
    assert repaired.code == 0 and "Removed" in repaired.out, repaired
    fold = world.fold(0)
    assert fold.damaged == 0
    tasks, _typed, _ops = expected_state(world)
    assert fold.tasks == tasks


def test_the_convergence_check_can_fail(cli, tmp_path: Path) -> None:
    """Not vacuous: a clone whose file lost a line it should have is caught."""
    world = make_world(tmp_path, cli, 2)
    op_add(world, 0, "high")
    op_add(world, 1, "low")
    converge(world, [0, 1])
    check_converged(world)
    path = world.clones[1] / TASKLIST
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))
    try:
        check_converged(world)
    except AssertionError:
        return
    raise AssertionError("a lost line went unnoticed")


# --- the classic stale-overwrite cases, spelled out ---------------------------------------


@pytest.mark.parametrize("later", ["merging side", "merged side"])
@pytest.mark.parametrize(("first", "second"), [("abandon", "start"), ("done", "abandon"),
                                               ("start", "done"), ("abandon", "done")])
def test_the_later_change_wins_whichever_side_merges(cli, tmp_path: Path, later: str,
                                                     first: str, second: str) -> None:
    """Two branches change the same task; the later change wins in every clone, whether
    it sits on the side that merges (union puts it first) or on the merged side; but a
    start made without having seen the close never reopens the task (docs/file-format.md, "Field-level merge")."""
    world = make_world(tmp_path, cli, 2)
    op_add(world, 0, "medium")
    op_merge(world, 1, 0)  # both know the task now
    early, late = (1, 0) if later == "merging side" else (0, 1)
    op_set(world, early, 0, first)
    op_set(world, late, 0, second)
    op_merge(world, 0, 1)
    op_merge(world, 1, 0)
    check_converged(world)
    (task,) = world.fold(0).tasks.values()
    # ... except a start that had not seen the task closed: it never reopens it
    stays = second == "start" and first in ("done", "abandon")
    assert task["status"] == VERBS[first if stays else second]


def test_an_abandoned_task_stays_abandoned_across_stale_branches(cli, tmp_path: Path) -> None:
    """A branch that still has the task as pending (made before the abandonment) merges
    in later, even with newer commits of other tasks: the task stays abandoned."""
    world = make_world(tmp_path, cli, 3)
    op_add(world, 0, "high")
    converge(world, [0, 1, 2])
    op_set(world, 0, 0, "abandon")
    for _ in range(3):
        op_add(world, 1, "low")
        op_add(world, 2, "low")
        op_merge(world, 2, 1)
    op_sync(world, 2)
    op_sync(world, 0)
    op_sync(world, 1)
    converge(world, [2, 1, 0])
    check_converged(world)
    abandoned = [t for t in world.fold(1).tasks.values() if t["priority"] == "high"]
    assert [t["status"] for t in abandoned] == ["abandoned"]
