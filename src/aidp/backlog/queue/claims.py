"""Claims: who works on a task, released when done, stale ones found; the actor's name."""


import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from aidp.backlog.ids import resolve_all, resolve_id
from aidp.backlog.queue.folded import (
    CLAIM,
    CLOSED_STATUSES,
    MAX_ACTOR,
    Change,
    ClaimRefused,
    NothingReady,
    QueueState,
    blocked,
    claim_id,
    extras,
    first_ready,
    next_stamp,
    ready,
    short,
    state,
    typed_record,
    with_extras,
)
from aidp.core.errors import InvalidInput
from aidp.core.model import (
    OPEN_STATUSES,
    Record,
    clean_text,
    transition,
    ts_of,
)
from aidp.core.plain import Plain
from aidp.tasklist.log import Fold, TaskLog

# --- claims -------------------------------------------------------------------------------


def validate_actor(value: str) -> str:
    return clean_text(value, what="assignee name", limit=MAX_ACTOR)


def default_actor(root: os.PathLike[str] | str | None = None) -> str:
    """AIDP_ACTOR, else git's user.email, else the login name (docs/guide.md, "`aidp
    tasks claim`")."""
    return actor_lookup(root)()


def actor_lookup(root: os.PathLike[str] | str | None = None) -> Callable[[], str]:
    """`default_actor`, started now and answered when called: git runs while the caller
    reads the tasklist (a claim asks git only once it knows what to claim)."""
    named = os.environ.get("AIDP_ACTOR", "").strip()
    if named:
        value = validate_actor(named)
        return lambda: value
    import subprocess  # only when AIDP_ACTOR is unset: kept off start-up

    try:
        proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            ["git", "config", "--get", "user.email"], cwd=root, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
    except OSError:
        proc = None
    answer: list[str] = []

    def get() -> str:
        if not answer:
            answer.append(_from_git(proc))
        return answer[0]

    return get


def _from_git(proc: Any) -> str:
    import subprocess

    email = ""
    if proc is not None:
        try:
            out, _err = proc.communicate(timeout=5)
            if proc.returncode == 0:
                email = out.decode("utf-8", "replace").strip()
        except (OSError, subprocess.SubprocessError):
            proc.kill()
            proc.wait()
    if email:
        try:
            return validate_actor(email)
        except InvalidInput:
            pass
    import getpass

    try:
        return validate_actor(getpass.getuser())
    except (OSError, KeyError, InvalidInput):
        return "unknown"


class Claimed(Plain):
    _fields = ("task", "claim", "changed", "shown")

    def __init__(self, task: Record, claim: Record, changed: bool, shown: Record) -> None:
        self.task = task
        self.claim = claim
        self.changed = changed
        self.shown = shown  # the task with its queue keys after the claim (JSON output)


def why_nothing_ready(fold: Fold, skipped: int = 0) -> str:
    """What the open tasks are doing instead, e.g. "2 blocked, 1 in progress"."""
    waiting = blocked(fold)
    parts = []
    if waiting:
        parts.append(f"{len(waiting)} blocked")
    started = fold.summaries(("in_progress",))
    if started:
        parts.append(f"{len(started)} in progress")
    if skipped:
        parts.append(f"{skipped} already tried in this run")
    return ", ".join(parts) or "no open tasks"


def _nothing_ready(fold: Fold, skipped: int) -> NothingReady:
    return NothingReady(f"Nothing ready to claim ({why_nothing_ready(fold, skipped)}); "
                        "see 'aidp tasks blocked'")


def _release_records(claims: Iterable[Record]) -> list[Record]:
    out = []
    for claim in claims:
        released = dict(claim)
        stamp = next_stamp(claim)
        released["released_at"] = stamp
        released["updated_at"] = stamp
        out.append(released)
    return out


def claim(log: TaskLog, ref: str | None, assignee: str | Callable[[], str], *,
          exclude: Iterable[str] = ()) -> Claimed:
    """Atomically (under the write lock): the task goes in_progress and `assignee` holds
    it. Without `ref`, the first ready task (not in `exclude`). Refused when someone
    else holds it, when it is closed or waits on an open task; NothingReady when no task
    is ready. Concurrent claims never hand out one task twice: each sees the others'.
    `assignee` may be a function (see `actor_lookup`), called once the task is known."""
    who: Callable[[], str] = ((lambda: validate_actor(assignee)) if isinstance(assignee, str)
                              else assignee)
    if isinstance(assignee, str):
        validate_actor(assignee)
    skip = list(exclude)
    result: list[Claimed] = []

    def change(fold: Fold) -> list[Record]:
        if ref is None:
            found = first_ready(fold, exclude=skip)
            if found is None:
                tried = set(skip)
                raise _nothing_ready(fold, sum(e.id in tried for e in ready(fold)))
            tid = found
        else:
            tid = resolve_id(fold, ref)
        qs = state(fold, about=tid)  # what this task's links need is all this claim reads
        task = fold.tasks[tid]
        status = task.get("status")
        label = short(tid, fold)
        if status in CLOSED_STATUSES:
            raise ClaimRefused(f"Cannot claim task {label}: it is {status}; "
                               f"reopen it first ('aidp tasks reopen {label}')")
        assignee = who()
        holder = qs.holder(task)
        if holder is not None:
            if holder["assignee"] == assignee:
                result[:] = [Claimed(task, holder, changed=False, shown=with_extras(qs, task))]
                return []
            raise ClaimRefused(f"Cannot claim task {label}: it is claimed by "
                               f"{holder['assignee']} since {holder.get('claimed_at', '?')}")
        if status == "pending" and ref is not None:  # a task from ready() waits on nothing
            waiting = [w for w in qs.waits(tid)
                       if (fold.tasks.get(w) or {}).get("status") in OPEN_STATUSES]
            if waiting:
                listed = ", ".join(short(w, fold) for w in waiting)
                raise ClaimRefused(f"Cannot claim task {label}: it waits on open task(s) "
                                   f"{listed}; see 'aidp tasks blocked'")
        records: list[Record] = []
        # Active claims that are not in effect (the task went back to pending on another
        # clone, or before this version released claims on reopen) are released, so
        # they can never come back into effect.
        records += _release_records(qs.claims.get(tid, ()))
        if status != "in_progress":
            task = transition(task, "in_progress")
            records.insert(0, task)
        rid = claim_id(tid, assignee)
        stamp = next_stamp(typed_record(fold, rid, tid))
        claimed: Record = {"type": CLAIM, "id": rid, "task": tid, "assignee": assignee,
                           "claimed_at": stamp, "updated_at": stamp}
        records = [r for r in records if r.get("id") != rid]
        records.append(claimed)
        shown = {**task, **extras(qs, task), "assignee": assignee, "claimed_at": stamp}
        result[:] = [Claimed(task, claimed, changed=True, shown=shown)]
        return records

    log.update(change)
    return result[0]


def release_records(fold: Fold, tid: str) -> list[Record]:
    """Records that release every active claim on `tid` (for any move back to pending)."""
    return _release_records(state(fold, about=tid).claims.get(tid, ()))


def stale(fold: Fold, qs: QueueState, claimed_before: int) -> list[str]:
    """Tasks held by a claim made before `claimed_before` (µs): the claims of workers
    that died without releasing them, say."""
    found = []
    for tid in qs.claims:
        task = fold.tasks.get(tid)
        holder = qs.holder(task) if task is not None else None
        if holder is not None and task is not None and task.get("status") == "in_progress" \
                and ts_of(holder, "claimed_at") < claimed_before:
            found.append(tid)
    return found


def release(log: TaskLog, refs: Sequence[str], *,
            claimed_before: int | None = None) -> list[Change]:
    """Back to pending, no assignee: the tasks `refs` names and, with `claimed_before`
    (µs), every task in progress held by an older claim. Every id is checked before
    anything is written."""
    results: list[Change] = []

    def change(fold: Fold) -> list[Record]:
        results.clear()
        ids = resolve_all(fold, refs)
        qs = state(fold, about=ids[0]) if claimed_before is None and len(ids) == 1 \
            else state(fold)
        if claimed_before is not None:
            ids += [tid for tid in stale(fold, qs, claimed_before) if tid not in ids]
        for tid in ids:
            status = fold.tasks[tid].get("status")
            if status in CLOSED_STATUSES:
                label = short(tid, fold)
                raise ClaimRefused(f"Cannot release task {label}: it is {status}; "
                                   f"use 'aidp tasks reopen {label}' to put it back")
        records: list[Record] = []
        for tid in ids:
            task = fold.tasks[tid]
            claims = qs.claims.get(tid, [])
            if task.get("status") == "pending" and not claims:
                results.append(Change(task, changed=False))
                continue
            if task.get("status") != "pending":
                task = transition(task, "pending")
                records.append(task)
            records += _release_records(claims)
            results.append(Change(task, changed=True))
        return records

    log.update(change)
    return results
