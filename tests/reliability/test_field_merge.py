"""Field-level merge (docs/file-format.md, "Field-level merge"): three clones change the same tasks concurrently with
aidp's own writers and merge each other's lines (what git's union merge keeps: every
line of both sides, in some order). Then, whatever the interleaving and the order of
the merges:
- every clone folds to the same state;
- a field group only one clone changed ends with that clone's last value (tags: a tag
  only one clone added or removed ends as that clone left it);
- a task that one clone closed and no clone reopened after seeing it stays closed;
- the plain fold agrees with `fields.merge_task` over the task's records, and the index
  gives the plain fold's answers.
Without git, for speed: tests/test_sync.py runs the same scenarios through real clones.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import examples

from aidp.backlog import queue, tasks
from aidp.core.errors import AidpError
from aidp.tasklist import fold
from aidp.tasklist.fields import fold_bytes, merge_task
from aidp.tasklist.fold import FIELDS, key_of
from aidp.tasklist.line import parse_line
from aidp.tasklist.log import TaskLog

GROUPS = ("description", "priority", "status")


def union(ours: bytes, theirs: bytes) -> bytes:
    """Our lines, then each line of theirs we do not have (git's union merge of two
    append-only files keeps both sides' new lines, ours first)."""
    have = set(ours.splitlines())
    extra = [line for line in theirs.splitlines() if line not in have]
    return ours + b"".join(line + b"\n" for line in extra)


class Clones:
    def __init__(self, root: Path, seed: int) -> None:
        self.logs = [TaskLog(root / f"c{n}") for n in range(3)]
        first = self.logs[0]
        self.ids = [tasks.add(first, f"task {n}", tags=["base"])["id"] for n in range(2)]
        for log in self.logs[1:]:
            log.ensure_dir()
            log.path.write_bytes(first.path.read_bytes())
        # (task, group) -> {clone: last value that clone set}
        self.changed: dict[tuple[str, str], dict[int, object]] = {}
        # (task, tag) -> {clone: present after that clone's last add/remove}
        self.tag_changes: dict[tuple[str, str], dict[int, bool]] = {}
        self.rng = random.Random(seed)

    def state(self, clone: int) -> dict[str, dict]:
        return dict(self.logs[clone].read().tasks)

    def act(self, clone: int, pick: int, action: str, value: str) -> None:
        log = self.logs[clone]
        tid = self.ids[pick % len(self.ids)]
        before = self.state(clone)[tid]
        try:
            if action == "priority":
                queue.edit(log, tid, priority=value)
            elif action == "description":
                queue.edit(log, tid, description=f"text {value} by {clone}")
            elif action == "add_tag":
                queue.edit(log, tid, add_tags=[value])
            elif action == "remove_tag":
                queue.edit(log, tid, remove_tags=[value])
            elif action == "note":
                queue.note(log, tid, f"note {value} by {clone}")
            elif action == "claim":
                queue.claim(log, tid, f"person{clone}")
            else:
                tasks.set_status(log, [tid], action)
        except AidpError:
            return  # refused (a claim on a done task, say): nothing written
        after = self.state(clone)[tid]
        for group in GROUPS:
            if fold.field_value(before, group) != fold.field_value(after, group):
                self.changed.setdefault((tid, group), {})[clone] = fold.field_value(after, group)
        old, new = set(before.get("tags", [])), set(after.get("tags", []))
        for tag in old ^ new:
            self.tag_changes.setdefault((tid, tag), {})[clone] = tag in new

    def pull(self, clone: int, other: int) -> None:
        ours, theirs = self.logs[clone], self.logs[other]
        ours.path.write_bytes(union(ours.path.read_bytes(), theirs.path.read_bytes()))

    def converge(self) -> None:
        for _ in range(2):
            for clone in self.rng.sample(range(3), 3):
                for other in self.rng.sample(range(3), 3):
                    if other != clone:
                        self.pull(clone, other)


actions = st.one_of(
    st.tuples(st.just("act"), st.integers(0, 2), st.integers(0, 1),
              st.sampled_from(["priority", "description", "add_tag", "remove_tag", "note",
                               "claim", "done", "abandoned", "in_progress", "pending"]),
              st.sampled_from(["high", "low", "medium", "x", "y", "base"])),
    st.tuples(st.just("pull"), st.integers(0, 2), st.integers(0, 2)),
)


def check(clones: Clones) -> None:
    states = [clones.state(n) for n in range(3)]
    assert states[0] == states[1] == states[2], "clones disagree"
    final = states[0]
    for (tid, group), by_clone in clones.changed.items():
        if len(by_clone) == 1:
            (value,) = by_clone.values()
            if group == "status" and final[tid]["status"] in ("done", "abandoned") and \
                    value[0] not in ("done", "abandoned"):
                continue  # a move between open states that had not seen the close
            assert fold.field_value(final[tid], group) == value, (tid, group)
    for (tid, tag), by_clone in clones.tag_changes.items():
        if len(by_clone) == 1:
            (present,) = by_clone.values()
            assert (tag in final[tid]["tags"]) == present, (tid, tag)
    # the fold equals merge_task over every record of the task, and the index the fold
    data = clones.logs[0].path.read_bytes()
    full = fold_bytes(data)
    entries: dict[str, list] = {}
    waiting: dict = {}
    for number, raw in enumerate(data.splitlines(), start=1):
        record = parse_line(raw)
        if record is None:
            continue
        if record.get("type") == FIELDS:
            waiting[fold.companion_key(record)] = record
        elif "type" not in record:
            spec = waiting.pop((record["id"], record["updated_at"]), None)
            entries.setdefault(record["id"], []).append((record, key_of(record, number), spec))
    assert {tid: merge_task(found) for tid, found in entries.items()} == full.tasks
    assert final == full.tasks


@settings(max_examples=examples(40, 300), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(script=st.lists(actions, min_size=1, max_size=25), seed=st.integers(0, 1000))
def test_three_clones_merge_field_by_field(tmp_path_factory, script: list, seed: int) -> None:
    clones = Clones(tmp_path_factory.mktemp("clones"), seed)
    for step in script:
        if step[0] == "act":
            clones.act(*step[1:])
        elif step[1] != step[2]:
            clones.pull(step[1], step[2])
    clones.converge()
    check(clones)


def test_priority_here_and_description_there_both_survive(tmp_path: Path) -> None:
    clones = Clones(tmp_path, 0)
    tid = clones.ids[0]
    queue.edit(clones.logs[0], tid, priority="high")
    queue.edit(clones.logs[1], tid, description="Rate limiting for auth endpoints")
    clones.converge()
    task = clones.state(2)[tid]
    assert (task["priority"], task["description"]) == ("high", "Rate limiting for auth endpoints")


def test_tags_added_on_both_sides_and_removed_on_one(tmp_path: Path) -> None:
    clones = Clones(tmp_path, 0)
    tid = clones.ids[0]
    queue.edit(clones.logs[0], tid, add_tags=["api"], remove_tags=["base"])
    queue.edit(clones.logs[1], tid, add_tags=["auth"])
    clones.converge()
    assert sorted(clones.state(0)[tid]["tags"]) == ["api", "auth"]


def test_a_claim_that_had_not_seen_the_done_never_reopens_it(tmp_path: Path) -> None:
    clones = Clones(tmp_path, 0)
    tid = clones.ids[0]
    tasks.set_status(clones.logs[0], [tid], "done")
    queue.claim(clones.logs[1], tid, "bob")  # later, on a clone that had not seen it
    queue.edit(clones.logs[1], tid, priority="high")
    clones.converge()
    task = clones.state(0)[tid]
    assert (task["status"], task["priority"]) == ("done", "high")
    assert "completed_at" in task


def test_a_note_here_and_a_status_there(tmp_path: Path) -> None:
    clones = Clones(tmp_path, 0)
    tid = clones.ids[0]
    queue.note(clones.logs[0], tid, "found the cause")
    tasks.set_status(clones.logs[1], [tid], "in_progress")
    clones.converge()
    fold_state = clones.logs[2].read()
    assert fold_state.tasks[tid]["status"] == "in_progress"
    assert [n["text"] for n in queue.state(fold_state).notes[tid]] == ["found the cause"]


def test_the_same_field_on_both_sides_the_later_wins(tmp_path: Path) -> None:
    clones = Clones(tmp_path, 0)
    tid = clones.ids[0]
    queue.edit(clones.logs[0], tid, priority="high")
    queue.edit(clones.logs[1], tid, priority="low")  # later
    clones.converge()
    assert clones.state(0)[tid]["priority"] == "low"


def test_the_property_can_fail(tmp_path: Path) -> None:
    """Not vacuous: with whole-record last-writer-wins (the companions dropped), the
    change the later record did not make is lost, and the check says so."""
    clones = Clones(tmp_path, 0)
    tid = clones.ids[0]
    clones.act(0, 0, "priority", "high")
    clones.act(1, 0, "description", "d")
    clones.converge()
    for log in clones.logs:
        log.path.write_bytes(b"".join(line + b"\n" for line in log.path.read_bytes().splitlines()
                                      if FIELDS.encode() not in line))
    with pytest.raises(AssertionError):
        check(clones)
    assert clones.state(0)[tid]["priority"] != "high" or \
        clones.state(0)[tid]["description"] != "text d by 1"
