"""The work queue's core (aidp.backlog.queue): dependencies, epics, cycles, claims, notes."""

from __future__ import annotations

import graphlib
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aidp.backlog import queue, tasks
from aidp.backlog.history import history as task_history
from aidp.backlog.queue import folded
from aidp.core.errors import InvalidInput, TaskNotFound
from aidp.tasklist.fields import fold_bytes
from aidp.tasklist.log import TaskLog


def add(log: TaskLog, text: str, **kw) -> str:
    return queue.file(log, text, **kw).task["id"] if kw else tasks.add(log, text)["id"]


def test_ready_orders_high_priority_first_then_oldest(log: TaskLog) -> None:
    low = tasks.add(log, "low", priority="low")["id"]
    old = tasks.add(log, "old medium")["id"]
    new = tasks.add(log, "new medium")["id"]
    high = tasks.add(log, "high", priority="high")["id"]
    assert [e.id for e in queue.ready(log.read())] == [high, old, new, low]


def test_blockers_hold_a_task_back_until_closed(log: TaskLog) -> None:
    a = add(log, "a")
    b = add(log, "b")
    c = add(log, "c", blocked_by=[a, b])
    assert c not in [e.id for e in queue.ready(log.read())]
    waiting = {e.id: e.waiting_on for e in queue.blocked(log.read())}
    assert waiting == {c: [a, b]}
    tasks.set_status(log, [a], "done")
    tasks.set_status(log, [b], "abandoned", reason="not needed")
    assert c in [e.id for e in queue.ready(log.read())]
    assert queue.blocked(log.read()) == []


def test_an_epic_waits_on_its_open_children(log: TaskLog) -> None:
    epic = add(log, "epic")
    child = add(log, "child", parent=epic)
    fold = log.read()
    assert [e.id for e in queue.ready(fold)] == [child]
    assert {e.id: e.waiting_on for e in queue.blocked(fold)} == {epic: [child]}
    tasks.set_status(log, [child], "done")
    assert [e.id for e in queue.ready(log.read())] == [epic]


def test_self_dependency_and_cycles_are_refused_and_write_nothing(log: TaskLog) -> None:
    a, b, c = add(log, "a"), add(log, "b"), add(log, "c")
    queue.block(log, b, [a])
    queue.block(log, c, [b])
    before = log.path.read_bytes()
    with pytest.raises(InvalidInput, match="cannot wait on itself"):
        queue.block(log, a, [a])
    with pytest.raises(queue.DependencyCycle) as caught:
        queue.block(log, a, [c])
    def short(tid: str) -> str:  # as every view names it: the short id
        return queue.short(tid, log.read())

    assert caught.value.cycle == [short(a), short(c), short(b), short(a)]
    assert str(caught.value).startswith(f"Refused: making {short(a)} wait on {short(c)}")
    # A child waiting on its epic is a cycle too (the epic waits on its children).
    epic = add(log, "epic")
    queue.edit(log, a, parent=epic)
    middle = log.path.read_bytes()
    with pytest.raises(queue.DependencyCycle):
        queue.block(log, a, [epic])
    with pytest.raises(queue.DependencyCycle):
        queue.edit(log, epic, parent=a)
    with pytest.raises(InvalidInput, match="its own parent"):
        queue.edit(log, epic, parent=epic)
    assert log.path.read_bytes() == middle
    assert middle.startswith(before)


def test_a_refused_edit_writes_none_of_its_fields(log: TaskLog) -> None:
    a = add(log, "a")
    b = add(log, "b", parent=a)
    before = log.path.read_bytes()
    with pytest.raises(queue.DependencyCycle):
        queue.edit(log, a, description="changed", parent=b)
    with pytest.raises(TaskNotFound):
        queue.edit(log, a, description="changed", parent="ffff")
    assert log.path.read_bytes() == before


def test_unknown_blocker_files_nothing(log: TaskLog) -> None:
    add(log, "a")
    before = log.path.read_bytes()
    with pytest.raises(TaskNotFound):
        queue.file(log, "b", blocked_by=["ffffffff"])
    assert log.path.read_bytes() == before


def test_unblock_and_reblock_fold_per_edge(log: TaskLog) -> None:
    a, b = add(log, "a"), add(log, "b")
    queue.block(log, b, [a])
    assert queue.unblock(log, b, [a]).changed == [a]
    assert queue.unblock(log, b, [a]).unchanged == [a]
    assert queue.state(log.read()).blockers == {}
    queue.block(log, b, [a])
    assert queue.state(log.read()).blockers == {b: [a]}


# --- cycles on random graphs -----------------------------------------------------------

edges = st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=30)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(attempts=edges)
def test_random_dependencies_never_form_a_cycle(tmp_path_factory, attempts) -> None:
    """Whatever order dependencies are asked for in, the accepted ones form a DAG
    (graphlib agrees), and every refusal names a real cycle that the edge would close."""
    log = TaskLog(tmp_path_factory.mktemp("graph"))
    ids = [tasks.add(log, f"t{n}")["id"] for n in range(8)]
    accepted: dict[str, set[str]] = {}
    for waiter, waited in attempts:
        a, b = ids[waiter], ids[waited]
        if a == b:
            with pytest.raises(InvalidInput):
                queue.block(log, a, [b])
            continue
        try:
            queue.block(log, a, [b])
        except queue.DependencyCycle as refused:
            trial = {k: set(v) for k, v in accepted.items()}
            trial.setdefault(a, set()).add(b)
            with pytest.raises(graphlib.CycleError):
                graphlib.TopologicalSorter(trial).prepare()
            cycle = refused.cycle
            fold = log.read()
            assert cycle[0] == cycle[-1] == queue.short(a, fold)
            by_short = {queue.short(i, fold): i for i in ids}
            for x, y in itertools.pairwise(cycle):
                assert by_short[y] in trial.get(by_short[x], set())
        else:
            accepted.setdefault(a, set()).add(b)
            graphlib.TopologicalSorter(accepted).prepare()
    folded = queue.state(log.read()).blockers
    assert {k: set(v) for k, v in folded.items()} == accepted


# --- claims -------------------------------------------------------------------------------


def test_claim_takes_the_first_ready_task_and_nothing_twice(log: TaskLog) -> None:
    a = add(log, "a")
    b = add(log, "b")
    first = queue.claim(log, None, "alice")
    assert first.task["id"] == a and first.task["status"] == "in_progress"
    assert queue.claim(log, None, "bob").task["id"] == b
    with pytest.raises(queue.NothingReady, match=r"Nothing ready to claim \(2 in progress\)"):
        queue.claim(log, None, "carol")
    fold = log.read()
    extras = queue.extras(queue.state(fold), fold.tasks[a])
    assert extras["assignee"] == "alice" and "claimed_at" in extras


def test_claim_refusals_name_the_reason(log: TaskLog) -> None:
    a = add(log, "a")
    b = add(log, "b", blocked_by=[a])
    queue.claim(log, a, "alice")
    before = log.path.read_bytes()
    with pytest.raises(queue.ClaimRefused, match="claimed by alice"):
        queue.claim(log, a, "bob")
    with pytest.raises(queue.ClaimRefused, match=f"waits on open task.*{queue.short(a, log.read())}\\b"):
        queue.claim(log, b, "bob")
    assert queue.claim(log, a, "alice").changed is False
    tasks.set_status(log, [a], "done")
    middle = log.path.read_bytes()
    with pytest.raises(queue.ClaimRefused, match="it is done; reopen it first"):
        queue.claim(log, a, "bob")
    with pytest.raises(queue.ClaimRefused, match="it is done"):
        queue.release(log, [a])
    assert log.path.read_bytes() == middle and middle.startswith(before)


def test_release_and_reopen_free_the_task(log: TaskLog) -> None:
    a = add(log, "a")
    queue.claim(log, a, "alice")
    [change] = queue.release(log, [a])
    assert change.changed and change.task["status"] == "pending"
    fold = log.read()
    assert queue.state(fold).claims == {}
    assert [e.id for e in queue.ready(fold)] == [a]
    assert queue.release(log, [a])[0].changed is False
    queue.claim(log, a, "bob")
    tasks.set_status(log, [a], "done")
    fold = log.read()
    assert queue.extras(queue.state(fold), fold.tasks[a])["assignee"] == "bob"  # who did it
    tasks.set_status(log, [a], "pending")  # reopen releases the claim
    fold = log.read()
    assert queue.state(fold).claims == {}
    assert queue.claim(log, None, "carol").task["id"] == a


def test_started_task_without_assignee_can_be_claimed(log: TaskLog) -> None:
    a = add(log, "a")
    tasks.set_status(log, [a], "in_progress")
    result = queue.claim(log, a, "alice")
    assert result.changed and result.task["status"] == "in_progress"


def test_merged_claims_fold_to_the_earliest_whatever_the_line_order(log: TaskLog) -> None:
    a = add(log, "a")
    base = log.path.read_bytes()
    queue.claim(log, a, "alice")
    alice = log.path.read_bytes()[len(base):]
    log.path.write_bytes(base)
    queue.claim(log, a, "bob")  # later
    bob = log.path.read_bytes()[len(base):]
    for merged in (base + alice + bob, base + bob + alice):
        fold = fold_bytes(merged)
        qs = queue.state(fold)
        assert queue.extras(qs, fold.tasks[a])["assignee"] == "alice"
        assert [c["assignee"] for c in qs.claims[a]] == ["alice", "bob"]


def test_a_claim_made_after_a_close_it_had_not_seen_is_not_in_effect(log: TaskLog) -> None:
    """One clone closes the task, the other (not seeing it) claims it later: the merge
    keeps the close, and the late claimer is not shown as its assignee (de52)."""
    a, b = add(log, "a"), add(log, "b")
    queue.claim(log, b, "alice")
    base = log.path.read_bytes()
    tasks.set_status(log, [a], "done")
    tasks.set_status(log, [b], "abandoned", reason="not needed")
    closed = log.path.read_bytes()[len(base):]
    log.path.write_bytes(base)
    queue.claim(log, a, "bob")  # later than both closes
    bob = log.path.read_bytes()[len(base):]
    for merged in (base + closed + bob, base + bob + closed):
        fold = fold_bytes(merged)
        qs = queue.state(fold)
        assert fold.tasks[a]["status"] == "done"
        assert queue.extras(qs, fold.tasks[a]) == {}
        assert qs.holder(fold.tasks[a]) is None
        # a claim made before the close still names who did it
        assert queue.extras(qs, fold.tasks[b])["assignee"] == "alice"
        found = tasks.find(fold.tasks.values(), tasks.Query(statuses=None, assignee="bob"), qs)
        assert found.tasks == []


def test_notes_and_edits(log: TaskLog) -> None:
    a = add(log, "a")
    queue.note(log, a, "first", author="alice")
    queue.note(log, a, "second")
    change = queue.edit(log, a, description="a, clearer", priority="high", add_tags=["x", "y"])
    assert change.changed and change.task["description"] == "a, clearer"
    assert queue.edit(log, a, remove_tags=["x"]).task["tags"] == ["y"]
    assert queue.edit(log, a, priority="high").changed is False
    fold = log.read()
    notes = queue.extras(queue.state(fold), fold.tasks[a])["notes"]
    assert [n["text"] for n in notes] == ["first", "second"]
    assert notes[0]["author"] == "alice" and "author" not in notes[1]
    history = task_history(log, a)
    assert [h.changes.get("description") for h in history][1] == ("a", "a, clearer")
    with pytest.raises(InvalidInput, match="Nothing to edit"):
        queue.edit(log, a)
    with pytest.raises(InvalidInput, match="note"):
        queue.note(log, a, "   ")


def test_task_records_keep_only_the_ruby_keys(log: TaskLog) -> None:
    from tests.test_interchange import RUBY_KEYS

    a = add(log, "a")
    with pytest.raises(queue.DependencyCycle, match="a new task under"):
        add(log, "b", blocked_by=[a], parent=a)  # a waits on its child b, b on a
    epic = add(log, "epic")
    b = add(log, "b", blocked_by=[a], parent=epic)
    queue.claim(log, a, "alice")
    queue.note(log, b, "n")
    queue.edit(log, b, description="bb")
    for number, _raw, record in log.scan():
        assert record is not None, number
        if "type" not in record:
            assert set(record) <= RUBY_KEYS


def test_malformed_queue_records_are_ignored(log: TaskLog) -> None:
    a = add(log, "a")
    log.append([
        {"type": "dep", "id": "dep:x", "task": a, "blocked_by": 7, "updated_at": "2026-01-01T00:00:00Z"},
        {"type": "claim", "id": "claim:y", "task": None, "assignee": "z"},
        {"type": "note", "id": "note:z", "task": a, "text": ["no"]},
    ])
    fold = log.read()
    assert queue.extras(queue.state(fold), fold.tasks[a]) == {}
    assert [e.id for e in queue.ready(fold)] == [a]


def test_find_path_is_shortest() -> None:
    graph = {"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": ["e"]}
    assert queue.find_path(graph, "a", "e") in (["a", "b", "d", "e"], ["a", "c", "d", "e"])
    assert queue.find_path(graph, "e", "a") is None


# --- ready/blocked against a plain reference -----------------------------------------------

STATUS_CHOICES = ("pending", "pending", "in_progress", "done", "abandoned")


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(statuses=st.lists(st.sampled_from(STATUS_CHOICES), min_size=1, max_size=12),
       priorities=st.lists(st.sampled_from(("high", "medium", "low")), min_size=12, max_size=12),
       deps=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=20),
       parents=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=6),
       indexed=st.booleans(), limit=st.integers(0, 4))
def test_ready_and_blocked_match_a_plain_reference(tmp_path_factory, statuses, priorities,
                                                   deps, parents, indexed, limit) -> None:
    """Through the store's columns (or a plain fold), ready and blocked give what the
    definition says, computed naively from the full fold's records."""
    from aidp import store
    from aidp.app.project import StoreReader
    from aidp.core.model import PRIORITY_RANK, ts_of
    from aidp.store import loader

    log = TaskLog(tmp_path_factory.mktemp("ready"), reader=StoreReader(background=False))
    n = len(statuses)
    ids = [tasks.add(log, f"t{i}", priority=priorities[i])["id"] for i in range(n)]
    for i, status in enumerate(statuses):
        if status != "pending":
            tasks.set_status(log, [ids[i]], status, reason="r" if status == "abandoned" else None)
    for a, b in deps:
        if a < n and b < n:
            try:
                queue.block(log, ids[a], [ids[b]])
            except InvalidInput:
                pass
    for child, epic in parents:
        if child < n and epic < n:
            try:
                queue.edit(log, ids[child], parent=ids[epic])
            except InvalidInput:
                pass
    if indexed:
        log.append([{"type": "padding", "id": f"pad{i}", "text": "x" * 900} for i in range(40)])
    saved = loader.MIN_BYTES, loader.STRICT
    loader.MIN_BYTES, loader.STRICT = (0, True) if indexed else (1 << 40, False)
    try:
        fold = log.read()
        assert isinstance(fold, store.StoreFold) == indexed
        got_ready = [e.id for e in queue.ready(fold)]
        got_first = [e.id for e in queue.ready(fold, limit=limit)]
        got_blocked = {e.id: e.waiting_on for e in queue.blocked(fold)}
    finally:
        loader.MIN_BYTES, loader.STRICT = saved
    plain = log.full_fold()
    qs = queue.state(plain)
    status = {tid: t["status"] for tid, t in plain.tasks.items()}
    open_ = {tid for tid, s in status.items() if s in ("pending", "in_progress")}
    waits = {tid: [w for w in qs.waits(tid) if w in open_] for tid in plain.tasks}
    order = list(plain.tasks)

    def rank(tid: str):
        task = plain.tasks[tid]
        return (PRIORITY_RANK[task["priority"]], ts_of(task, "created_at"), order.index(tid))

    want_ready = sorted((t for t in order if status[t] == "pending" and not waits[t]), key=rank)
    assert got_ready == want_ready
    assert got_first == want_ready[:limit]
    assert got_blocked == {t: waits[t] for t in order if t in open_ and waits[t]}
    assert list(got_blocked) == sorted(got_blocked, key=rank)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.booleans(), st.sampled_from(("claim", "release")),
                              st.integers(0, 2), st.sampled_from(("ann", "bob", "cy"))),
                    max_size=12))
def test_claims_on_two_clones_merge_the_same_in_either_order(tmp_path_factory, ops) -> None:
    """Whatever the two clones did, a union merge in either order folds to the same
    statuses and holders, and a holder's task is never pending."""
    base_log = TaskLog(tmp_path_factory.mktemp("base"))
    ids = [tasks.add(base_log, f"t{n}")["id"] for n in range(3)]
    base = base_log.path.read_bytes()
    clones = []
    for _ in range(2):
        clone = TaskLog(tmp_path_factory.mktemp("clone"))
        clone.dir.mkdir()
        clone.path.write_bytes(base)
        clones.append(clone)
    for second, op, n, who in ops:
        clone = clones[second]
        try:
            if op == "claim":
                queue.claim(clone, ids[n], who)
            else:
                queue.release(clone, [ids[n]])
        except queue.ClaimRefused:
            pass
    a, b = (c.path.read_bytes()[len(base):] for c in clones)
    seen = []
    for merged in (base + a + b, base + b + a):
        fold = fold_bytes(merged)
        qs = queue.state(fold)
        view = {}
        for tid in ids:
            task = fold.tasks[tid]
            holder = qs.holder(task)
            if holder is not None:
                assert task["status"] != "pending"
            view[tid] = (task["status"], holder["assignee"] if holder else None)
        seen.append(view)
    assert seen[0] == seen[1]


# --- the queue state of one task ----------------------------------------------------------

_IDS = [f"task_1700000000_{n:08x}" for n in range(5)]
_VALUES = st.one_of(st.sampled_from(_IDS), st.none(), st.integers(0, 3), st.just(["x"]))
_QUEUE_RECORD = st.fixed_dictionaries(
    {"type": st.sampled_from(("dep", "parent", "claim", "note", "other")),
     "id": st.sampled_from([f"r{n}" for n in range(8)]),
     "task": _VALUES},
    optional={"blocked_by": _VALUES, "parent": _VALUES,
              "assignee": st.sampled_from(("ann", "bob", 3)),
              "released_at": st.sampled_from(("2026-01-02T00:00:00Z", None)),
              "removed": st.booleans(),
              "text": st.sampled_from(("note", ["no"])),
              "claimed_at": st.sampled_from(("2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z")),
              "created_at": st.sampled_from(("2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z")),
              "updated_at": st.sampled_from(("2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"))})


@settings(max_examples=200, deadline=None)
@given(records=st.lists(_QUEUE_RECORD, max_size=24))
def test_the_state_about_one_task_equals_the_whole_state_for_it(records) -> None:
    """`show` folds only the records one task's links need (state(fold, about=id)):
    its blockers, dependents, parent, children, claims and notes are the whole state's,
    whatever the records (duplicates, a re-parented child, malformed fields)."""
    import orjson

    tasks = [{"id": tid, "description": tid, "status": "in_progress",
              "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}
             for tid in _IDS]
    fold = fold_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [*tasks, *records]))
    whole = folded.state(fold)
    for tid in _IDS:
        one = folded.state(fold, about=tid)
        for field in ("blockers", "dependents", "children", "claims", "notes"):
            assert getattr(one, field).get(tid) == getattr(whole, field).get(tid), field
        assert one.parent.get(tid) == whole.parent.get(tid)
        assert queue.extras(one, fold.tasks[tid]) == queue.extras(whole, fold.tasks[tid])


def test_the_queue_adds_these_keys_to_a_task(log: TaskLog) -> None:
    """The keys queue.extras can give a task's JSON (docs/file-format.md names them)."""
    a = add(log, "a")
    queue.claim(log, a, "ann")  # in progress, held: assignee, claimed_at
    queue.note(log, a, "seen")
    waiting = add(log, "waits on a")
    queue.block(log, waiting, [a])
    epic = add(log, "epic")
    queue.file(log, "child", parent=epic)
    gone = add(log, "held by an agent that died")
    queue.claim(log, gone, "bob", lease=1_000_000)  # a lease of one second
    fold = log.read()
    qs = queue.state(fold)
    later = queue.judge(qs.holder(fold.tasks[gone])).until + 1  # once that ran out
    keys = {key for t in fold.tasks.values() for key in queue.extras(qs, t, now=later)}
    assert keys == {"blocked_by", "parent", "assignee", "claimed_at", "lease_until", "stale",
                    "notes"}
