"""What `aidp sync` tells each side (docs/guide.md, "aidp sync"): of two clones that
claimed one task offline, the winner that it holds it and the loser, in one line naming
the task and the holder, that it does not — whichever syncs first; and after a
fast-forward pull, the value that replaced one you set, and whose it is. Real git: a
bare remote and two clones (tests/test_sync.py's team)."""

from __future__ import annotations

import json
import time

import pytest

from tests.test_sync import ok, team  # noqa: F401 (the fixture)


def sid(aidp, who: str, tid: str) -> str:
    """The short id `who`'s views show for `tid` now."""
    shown = json.loads(ok(aidp(who, "tasks", "list", "--all", "--json")))
    ids = [t["id"] for t in shown]
    from aidp.backlog.ids import short_ids
    from aidp.tasklist.fold import Fold

    fold = Fold()
    for n, tid_ in enumerate(ids):
        fold.tasks[tid_] = {"id": tid_}
        fold.task_keys[tid_] = (n, n)
    return short_ids(fold, [tid])[tid]


@pytest.mark.parametrize("first_to_sync", ["alice", "bob"])
def test_two_clones_claim_one_task_offline_and_sync_tells_each_which_claim_won(
        team, first_to_sync: str) -> None:  # noqa: F811 (the fixture)
    _clones, aidp = team
    tid = ok(aidp("alice", "tasks", "add", "Fix the flaky upload test", "-q")).strip()
    ok(aidp("alice", "sync"))
    ok(aidp("bob", "sync"))
    ok(aidp("alice", "tasks", "claim", tid))  # alice first: her claim holds after a merge
    time.sleep(0.01)
    ok(aidp("bob", "tasks", "claim", tid))
    second = "bob" if first_to_sync == "alice" else "alice"
    out_first = ok(aidp(first_to_sync, "sync"))
    out_second = ok(aidp(second, "sync"))   # a merge: the other's claim comes in
    out_third = ok(aidp(first_to_sync, "sync"))  # a fast-forward: the merge comes in
    said = {first_to_sync: out_first + out_third, second: out_second}
    short = sid(aidp, "alice", tid)
    won = (f"✓ {short} Fix the flaky upload test: you hold it; the claim of "
           "bob@example.invalid (from aidp tests <bob@example.invalid>) came after yours")
    lost = (f"! {short} Fix the flaky upload test: alice@example.invalid holds it (from "
            "aidp tests <alice@example.invalid>): their claim came first; you no longer hold it")
    assert won in said["alice"], said
    assert lost in said["bob"], said
    for who in ("alice", "bob"):  # never told backwards, never told twice
        assert said[who].count(short) == 1, said[who]
        assert "status in_progress" not in said[who]
    for who in ("alice", "bob"):
        task = json.loads(ok(aidp(who, "tasks", "show", tid, "--json")))
        assert task["assignee"] == "alice@example.invalid"
    # bob's next command on that task says so too.
    told = aidp("bob", "tasks", "show", tid)
    assert told.err == (f"Note: You no longer hold task {short}: alice@example.invalid holds "
                        "it now (their claim, made on another clone, came first)\n")


def test_after_a_fast_forward_pull_sync_names_the_value_that_replaced_yours(
        team) -> None:  # noqa: F811 (the fixture)
    _clones, aidp = team
    tid = ok(aidp("alice", "tasks", "add", "Tune the cache", "-q")).strip()
    ok(aidp("alice", "sync"))
    other = ok(aidp("bob", "tasks", "add", "Bob's task", "-q")).strip()
    ok(aidp("bob", "sync"))
    ok(aidp("alice", "tasks", "edit", tid, "-p", "high"))
    ok(aidp("alice", "sync"))
    ok(aidp("bob", "sync"))
    ok(aidp("bob", "tasks", "edit", tid, "-p", "low"))
    ok(aidp("bob", "tasks", "edit", other, "-d", "Bob's own wording"))
    ok(aidp("bob", "sync"))
    out = ok(aidp("alice", "sync"))  # a fast-forward to bob's commit
    short = sid(aidp, "alice", tid)
    assert (f"~ {short} Tune the cache: priority high → low (from aidp tests "
            "<bob@example.invalid>)") in out, out
    assert "Bob's own wording" not in out  # a value alice never set: not hers to hear of
    assert out.count(" → ") == 1
    assert json.loads(ok(aidp("alice", "tasks", "show", tid, "--json")))["priority"] == "low"
