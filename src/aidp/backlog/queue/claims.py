"""Claims: who works on a task and for how long (its lease: aidp.backlog.queue.leases),
taken over once that ran out, released when done; what `ready` offers; the actor's name."""


import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from aidp.backlog.ids import resolve_all, resolve_id
from aidp.backlog.queue import folded
from aidp.backlog.queue.folded import (
    CLAIM,
    CLOSED_STATUSES,
    MAX_ACTOR,
    Change,
    ClaimRefused,
    Entry,
    NothingReady,
    QueueState,
    blocked,
    claim_id,
    extras,
    next_stamp,
    short,
    state,
    typed_record,
    with_extras,
)
from aidp.backlog.queue.leases import DEFAULT_LEASE, Lease, judge, lease_fields, renewed
from aidp.backlog.queue.renewal import stale as stale_claims
from aidp.core.errors import InvalidInput
from aidp.core.model import (
    OPEN_STATUSES,
    Record,
    clean_text,
    now_micros,
    priority_key,
    priority_rank,
    transition,
    ts_of,
)
from aidp.core.plain import Plain
from aidp.tasklist.log import Fold, TaskLog

# --- what is ready ------------------------------------------------------------------------


def ready(fold: Fold, *, exclude: Iterable[str] = (), limit: int | None = None,
          priorities: Collection[str] = (), now: int | None = None) -> list[Entry]:
    """The tasks to work on now, best first (docs/guide.md, "Work queue"): the fresh ones
    (pending, waiting on nothing open: folded.ready, one question), then the stale ones
    (in progress, their holder's lease run out, waiting on nothing open), which a claim
    takes over; at most `limit`; with `priorities`, of those only."""
    skip = list(exclude)
    fresh = folded.ready(fold, exclude=skip, limit=limit, priorities=priorities)
    if limit is not None and len(fresh) >= limit:
        return fresh
    more = stale_ready(fold, exclude=skip, priorities=priorities, now=now)
    found = fresh + more
    return found if limit is None else found[:limit]


def stale_ready(fold: Fold, *, exclude: Iterable[str] = (), priorities: Collection[str] = (),
                now: int | None = None) -> list[Entry]:
    """`ready`'s stale tasks, best first (priority, then oldest)."""
    found = stale_claims(fold, now)
    if not found:
        return []
    skip, wanted = set(exclude), set(priorities)
    waiting = {entry.id for entry in blocked(fold)}
    rows = [s for s in found if s.id not in skip and s.id not in waiting
            and (not wanted or priority_key(s.priority) in wanted)]
    rows.sort(key=lambda s: (priority_rank(s.priority), s.created))
    return [Entry(s.id, s.priority, s.created, "in_progress", []) for s in rows]


def first_ready(fold: Fold, *, exclude: Iterable[str] = (), now: int | None = None
                ) -> str | None:
    """The id of the task `ready` lists first (a stale one only when no task is fresh)."""
    skip = list(exclude)
    found = folded.first_ready(fold, exclude=skip)
    if found is not None:
        return found
    more = stale_ready(fold, exclude=skip, now=now)
    return more[0].id if more else None


def ready_count(fold: Fold, now: int | None = None) -> int:
    """How many tasks `ready` would list (folded.ready_count's fresh ones, and the stale)."""
    return folded.ready_count(fold) + len(stale_ready(fold, now=now))


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
    """What a claim did: the task, the claim in effect, whether anything was written, the
    task as shown after it (JSON output), its lease; `renewed` (the holder's own claim
    held longer) and `took_over` (the lease of the previous holder, run out)."""

    _fields = ("task", "claim", "changed", "shown", "renewed", "took_over")

    def __init__(self, task: Record, claim: Record, changed: bool, shown: Record, *,
                 renewed: bool = False, took_over: Lease | None = None) -> None:
        self.task = task
        self.claim = claim
        self.changed = changed
        self.shown = shown  # the task with its queue keys after the claim (JSON output)
        self.renewed = renewed
        self.took_over = took_over

    @property
    def lease(self) -> Lease:
        return judge(self.claim)


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


def _release_records(claims: Iterable[Record], *, taken_over_by: str | None = None
                     ) -> list[Record]:
    out = []
    for claim in claims:
        released = dict(claim)
        stamp = next_stamp(claim)
        released["released_at"] = stamp
        if taken_over_by is not None and claim.get("assignee") != taken_over_by:
            released["taken_over_by"] = taken_over_by
        released["updated_at"] = stamp
        out.append(released)
    return out


def claim(log: TaskLog, ref: str | None, assignee: str | Callable[[], str], *,
          exclude: Iterable[str] = (), lease: int | None = None,
          default_lease: int = DEFAULT_LEASE, session: str | None = None) -> Claimed:
    """Atomically (under the write lock): the task goes in_progress and `assignee` holds
    it for `lease` (µs; when None: `default_lease` for a new claim, the length it had for
    a renewal). Without
    `ref`, the first ready task (not in `exclude`): a fresh one, else a stale one.

    - Held by `assignee` already: renewed, written at most once per half lease (or when
      `lease` changes its length); else nothing changes.
    - Held by someone else whose lease ran out (stale): taken over, the previous
      holder's claim released naming the new holder, the new one naming the previous.
    - Held by someone else with a live lease, closed, or waiting on an open task:
      refused (ClaimRefused, the holder and its lease named). NothingReady when no task
      is ready. Concurrent claims never hand out one task twice: each sees the others'.

    `assignee` may be a function (see `actor_lookup`), called once the task is known;
    `session`, when given, is kept in the claim (who works on it, for people)."""
    who: Callable[[], str] = ((lambda: validate_actor(assignee)) if isinstance(assignee, str)
                              else assignee)
    if isinstance(assignee, str):
        validate_actor(assignee)
    skip = list(exclude)
    result: list[Claimed] = []

    def change(fold: Fold) -> list[Record]:
        now = now_micros()
        if ref is None:
            found = first_ready(fold, exclude=skip, now=now)
            if found is None:
                tried = set(skip)
                raise _nothing_ready(fold, sum(e.id in tried for e in ready(fold, now=now)))
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
        me = who()
        holder = qs.holder(task)
        previous: Lease | None = None
        if holder is not None:
            held = judge(holder, now)
            if holder["assignee"] == me:
                return _renew(qs, task, holder, held, lease, now, result)
            # A live lease is never taken over: the holder's, nor that of a later claim
            # from another clone still renewed (the task would be that one's next).
            live = next((c for c in qs.claims.get(tid, ()) if c["assignee"] != me
                         and not judge(c, now).stale), None)
            if live is not None:
                raise ClaimRefused(f"Cannot claim task {label}: it is claimed by "
                                   f"{live['assignee']} since "
                                   f"{live.get('claimed_at', '?')} ({judge(live, now).said()})")
            previous = held
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
        # they can never come back into effect; on a takeover the stale holder's too,
        # each naming who took the task over.
        records += _release_records(qs.claims.get(tid, ()),
                                    taken_over_by=me if previous is not None else None)
        if status != "in_progress":
            task = transition(task, "in_progress")
            records.insert(0, task)
        rid = claim_id(tid, me)
        stamp = next_stamp(typed_record(fold, rid, tid))
        claimed: Record = {"type": CLAIM, "id": rid, "task": tid, "assignee": me,
                           "claimed_at": stamp,
                           **lease_fields(default_lease if lease is None else lease, now)}
        if previous is not None:
            claimed["took_over_from"] = previous.assignee
        if session:
            claimed["session"] = session
        claimed["updated_at"] = stamp
        records = [r for r in records if r.get("id") != rid]
        records.append(claimed)
        shown = {**task, **extras(_alone(qs, tid, claimed), task)}
        result[:] = [Claimed(task, claimed, changed=True, shown=shown, took_over=previous)]
        return records

    log.update(change)
    return result[0]


def _renew(qs: QueueState, task: Record, holder: Record, held: Lease, lease: int | None,
           now: int, result: list[Claimed]) -> list[Record]:
    """The holder claimed its own task again: its lease renewed when half of it ran out
    (or `lease` changes its length); nothing written otherwise."""
    length = held.length if lease is None else lease
    if not held.due and length == held.length:
        result[:] = [Claimed(task, holder, changed=False, shown=with_extras(qs, task))]
        return []
    claim = renewed(holder, length, now)
    shown = {**task, **extras(_alone(qs, task["id"], claim), task)}
    result[:] = [Claimed(task, claim, changed=True, shown=shown, renewed=True)]
    return [claim]


def _alone(qs: QueueState, tid: str, claim: Record) -> QueueState:
    """`qs` with `claim` as the task's only active claim (what the fold will say once
    the claim is written), for the task as the claim shows it."""
    after = QueueState.from_fields(qs.fields())
    after.claims = {**qs.claims, tid: [claim]}
    return after


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
            claimed_before: int | None = None,
            expect: Mapping[str, str | None] | None = None) -> list[Change]:
    """Back to pending, no assignee: the tasks `refs` names and, with `claimed_before`
    (µs), every task in progress held by an older claim. Every id is checked before
    anything is written; with `expect`, that each of `refs` still shows what a view
    showed (aidp.backlog.queue.seen)."""
    results: list[Change] = []

    def change(fold: Fold) -> list[Record]:
        results.clear()
        ids = resolve_all(fold, refs)
        if expect:
            from aidp.backlog.queue.seen import check

            for tid in ids:
                check(fold, tid, expect)
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


def release_left(log: TaskLog, session: str, since: int) -> list[Change]:
    """The tasks in progress held by a claim made in `session` at or after `since` (µs),
    released: `aidp run`'s agent (whose claims carry the run's session) exited without
    closing them, so nobody works on them any more (docs/guide.md, "Leases")."""
    from aidp.backlog.queue.leases import active

    def left(fold: Fold) -> list[str]:
        found = []
        for tid, _priority, _created, claims in fold.claims(("in_progress",)):
            held = active(claims)
            if held and held[0].get("session") == session \
                    and ts_of(held[0], "claimed_at") >= since:
                found.append(tid)
        return found

    if not left(log.read()):
        return []
    results: list[Change] = []

    def change(fold: Fold) -> list[Record]:
        results.clear()
        records: list[Record] = []
        for tid in left(fold):
            task = transition(fold.tasks[tid], "pending")
            records.append(task)
            records += release_records(fold, tid)
            results.append(Change(task, changed=True))
        return records

    log.update(change)
    return results

