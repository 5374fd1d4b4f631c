"""`tasks compact` never changes what anyone folds (docs/reliability.md §1): not the
compacted file alone, not a worktree's view of it beside the others, not a merge of it
with another clone's lines, now or after later changes — and it still shrinks the file.

The property runs two worlds side by side: clones that change tasks with aidp's own
writers, pull each other's lines (git's union merge: every line of both sides) and
compact at random points, and the same clones without a single compact. A change is
made once, in the world that never compacts, and its lines are appended to the same
clone in the other world: the writer decided from that clone's fold, which the
property holds equal in both worlds. After every step, every clone and every union of
two clones' files (the other one compacted or not) folds the same in both worlds.
tests/test_compact_git.py runs the issue's two cases through real git.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import examples

from aidp.backlog import queue, tasks
from aidp.core.errors import AidpError
from aidp.tasklist import maintenance
from aidp.tasklist.fields import fold_bytes
from aidp.tasklist.log import TaskLog

CLONES = 3


def union(ours: bytes, theirs: bytes) -> bytes:
    """Our lines, then each line of theirs we do not have (a union merge of two
    append-only files keeps both sides' lines, ours first)."""
    have = set(ours.splitlines())
    return ours + b"".join(line + b"\n" for line in theirs.splitlines() if line not in have)


def folded(data: bytes) -> tuple[dict, dict]:
    """What a file folds to: its tasks and its typed records (queue, notes)."""
    fold = fold_bytes(data)
    return fold.tasks, fold.typed


class Worlds:
    """`plain[n]`: clone n's tasklist as it would be without compact; `compacted[n]`:
    the same clone with the compacts."""

    def __init__(self, root: Path) -> None:
        self.plain = [TaskLog(root / f"plain{n}") for n in range(CLONES)]
        self.compacted = [TaskLog(root / f"compacted{n}") for n in range(CLONES)]
        first = self.plain[0]
        self.ids = [tasks.add(first, f"task {n}", priority="low", tags=["base"])["id"]
                    for n in range(2)]
        for log in [*self.plain[1:], *self.compacted]:
            log.ensure_dir()
            log.path.write_bytes(first.path.read_bytes())
        self.compacts = 0
        self.shrunk = 0

    def act(self, clone: int, pick: int, action: str, value: str) -> None:
        log = self.plain[clone]
        before = log.path.read_bytes()
        tid = self.ids[pick % len(self.ids)]
        other = self.ids[(pick + 1) % len(self.ids)]
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
            elif action == "release":
                queue.release(log, [tid])
            elif action == "block":
                queue.block(log, tid, [other])
            elif action == "unblock":
                queue.unblock(log, tid, [other])
            elif action == "add":
                self.ids.append(tasks.add(log, f"new {value} by {clone}")["id"])
            else:
                tasks.set_status(log, [tid], action)
        except AidpError:
            return  # refused (a claim on a done task, say): nothing written
        after = log.path.read_bytes()
        assert after.startswith(before), "a writer only appends"
        twin = self.compacted[clone]
        twin.path.write_bytes(twin.path.read_bytes() + after[len(before):])

    def pull(self, clone: int, other: int) -> None:
        for world in (self.plain, self.compacted):
            ours, theirs = world[clone], world[other]
            ours.path.write_bytes(union(ours.path.read_bytes(), theirs.path.read_bytes()))

    def compact(self, clone: int) -> None:
        log = self.compacted[clone]
        before = log.path.read_bytes()
        report = maintenance.compact(log)
        after = log.path.read_bytes()
        assert report.lines_after == len(after.splitlines()) <= len(before.splitlines())
        assert maintenance.compact(log).rewritten is False, "a second compact finds nothing"
        self.compacts += 1
        self.shrunk += len(after) < len(before)

    def check(self) -> None:
        plain = [log.path.read_bytes() for log in self.plain]
        compacted = [log.path.read_bytes() for log in self.compacted]
        for n in range(CLONES):
            assert folded(compacted[n]) == folded(plain[n]), f"clone {n} alone"
            for m in range(CLONES):
                if m == n:
                    continue
                want = folded(union(plain[n], plain[m]))
                assert folded(union(compacted[n], compacted[m])) == want, (n, m)
                assert folded(union(compacted[n], plain[m])) == want, (n, m, "plain other")
                assert folded(union(plain[m], compacted[n])) == want, (m, n, "theirs first")


ACTIONS = ["priority", "description", "add_tag", "remove_tag", "note", "claim", "release",
           "block", "unblock", "add", "done", "abandoned", "in_progress", "pending"]
steps = st.one_of(
    st.tuples(st.just("act"), st.integers(0, CLONES - 1), st.integers(0, 3),
              st.sampled_from(ACTIONS), st.sampled_from(["high", "low", "medium", "x", "y",
                                                         "base"])),
    st.tuples(st.just("pull"), st.integers(0, CLONES - 1), st.integers(0, CLONES - 1)),
    st.tuples(st.just("compact"), st.integers(0, CLONES - 1)),
)


def play(worlds: Worlds, script: list) -> None:
    for step in script:
        if step[0] == "act":
            worlds.act(*step[1:])
        elif step[0] == "compact":
            worlds.compact(step[1])
        elif step[1] != step[2]:
            worlds.pull(step[1], step[2])
        worlds.check()
    for clone in range(CLONES):  # the end: everyone pulls everyone, then compacts
        for other in range(CLONES):
            if other != clone:
                worlds.pull(clone, other)
        worlds.compact(clone)
        worlds.check()


@settings(max_examples=examples(40, 300), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(script=st.lists(steps, min_size=1, max_size=30))
def test_compact_never_changes_a_fold_now_or_after_any_merge(tmp_path_factory, script: list
                                                              ) -> None:
    play(Worlds(tmp_path_factory.mktemp("worlds")), script)


def test_the_issue_case_an_earlier_field_change_keeps_its_setter(tmp_path: Path) -> None:
    """priority low → high, then a status change; compacted, then merged with a file
    that still holds the task as filed: the priority stays high (it came back low)."""
    worlds = Worlds(tmp_path)
    play(worlds, [("act", 0, 0, "priority", "high"), ("act", 0, 0, "in_progress", ""),
                  ("compact", 0)])
    tid = worlds.ids[0]
    merged = folded(union(worlds.compacted[0].path.read_bytes(),
                          worlds.plain[1].path.read_bytes()))[0]
    assert merged[tid]["priority"] == "high"


def test_compact_still_shrinks_the_file(tmp_path: Path) -> None:
    """Superseded states go: a task claimed, released, claimed again and done keeps
    what it was filed with and its close; superseded claims and dependencies go."""
    worlds = Worlds(tmp_path)
    tid = worlds.ids[0]
    log = worlds.plain[0]
    for _ in range(3):
        queue.claim(log, tid, "ann")
        queue.release(log, [tid])
        queue.block(log, tid, [worlds.ids[1]])
        queue.unblock(log, tid, [worlds.ids[1]])
    tasks.set_status(log, [tid], "done")
    before = log.path.read_bytes()
    report = maintenance.compact(log)
    assert report.rewritten and report.lines_after < report.lines_before // 3
    assert folded(log.path.read_bytes()) == folded(before)


def test_the_property_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker notices a compact that keeps only each task's winning record and its
    companion (the rule before this one)."""
    from aidp.tasklist import setters

    def winner_only(self: setters.Needed) -> set[int]:
        return {self.winner}

    monkeypatch.setattr(setters.Needed, "kept", winner_only)
    with pytest.raises(AssertionError):
        play(Worlds(tmp_path), [("act", 0, 0, "priority", "high"),
                                ("act", 0, 0, "in_progress", ""), ("compact", 0)])
