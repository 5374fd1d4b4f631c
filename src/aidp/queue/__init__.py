"""The work queue: dependencies, epics, claims and notes on top of the backlog.

The original Ruby reader drops a task line with a key it does not know, so nothing
here goes into task records (DESIGN §6). Each fact is a typed record of its own,
keyed by the task id and folded by the same rule as everything else — the greatest
(updated_at, line number) per id wins:

- `dep`    `dep:<task>:<blocker>`     one dependency edge; `"removed": true` once unblocked
- `parent` `parent:<task>`            the task's epic; no `parent` key once detached
- `claim`  `claim:<task>:<assignee>`  one person's claim; `released_at` once released
- `note`   `note:<task>:<8 hex>`      one note, never changed

One record per edge, per claimant and per note (not one record per task) so that
changes made on two clones merge item by item after a union merge: nothing made on one
side is lost because the other side wrote a later snapshot.

Who holds a task: a pending task is held by nobody (a later release or reopen wins
over an older claim); otherwise the earliest active claim wins (claimed_at, then
name). Two clones that claimed the same task concurrently therefore agree, after a
merge, on the one who claimed first — what a single clone would have decided, since
the second claim would have been refused there.

An epic (a task with children) waits on its open children: it is not ready while any
of them is open, and a dependency that would make a child wait on its epic is a cycle.

Nothing here prints; errors are AidpErrors, turned into one line by the CLI.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from aidp import index
from aidp.errors import AidpError, ExitCode, InvalidInput
from aidp.log import Fold, TaskLog, _Plain
from aidp.model import (
    OPEN_STATUSES,
    PRIORITY_RANK,
    Record,
    canonical,
    clean_text,
    format_ts,
    new_task,
    next_updated_at,
    transition,
    ts_of,
    validate_description,
    validate_priority,
    validate_tag,
)
from aidp.tasks import Change, resolve_id

DEP, PARENT, CLAIM, NOTE = "dep", "parent", "claim", "note"
CLOSED_STATUSES = ("done", "abandoned")
MAX_NOTE = 2000
MAX_ACTOR = 200


# --- errors -------------------------------------------------------------------------


class DependencyCycle(InvalidInput):
    """A dependency or parent that would close a cycle (exit 2, the cycle named)."""

    def __init__(self, what: str, cycle: Sequence[str]) -> None:
        shown = " → ".join(cycle)
        super().__init__(f"Refused: {what} would close a cycle: {shown}")
        self.cycle = list(cycle)


class NothingReady(AidpError):
    exit_code = ExitCode.FAILURE


class ClaimRefused(AidpError):
    exit_code = ExitCode.FAILURE


# --- the folded queue state -----------------------------------------------------------


class QueueState(_Plain):
    """Dependencies, parents, claims and notes of every task, from the typed records."""

    _fields = ("blockers", "dependents", "parent", "children", "claims", "notes")

    def __init__(self) -> None:
        self.blockers: dict[str, list[str]] = {}  # task -> its blockers, oldest edge first
        self.dependents: dict[str, list[str]] = {}  # blocker -> the tasks it blocks
        self.parent: dict[str, str] = {}
        self.children: dict[str, list[str]] = {}
        self.claims: dict[str, list[Record]] = {}  # task -> active claims, holder first
        self.notes: dict[str, list[Record]] = {}  # task -> notes, oldest first

    def holder(self, task: Record) -> Record | None:
        """The claim in effect: none while the task is pending, else the earliest."""
        if task.get("status") == "pending":
            return None
        claims = self.claims.get(task.get("id", ""))
        return claims[0] if claims else None

    def waits(self, tid: str) -> list[str]:
        """What the task waits on: its blockers, then its children (an epic's)."""
        return [*self.blockers.get(tid, ()), *self.children.get(tid, ())]


def _text(record: Record, key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) and value else None


def state(fold: Fold) -> QueueState:
    """The queue state of a fold. Typed records of other kinds are skipped; malformed
    queue records (a field that is not text) are ignored, like unknown types."""
    qs = QueueState()
    edges: list[tuple[tuple[int, int], str, str]] = []
    kinds = (DEP, PARENT, CLAIM, NOTE)
    keys = fold.typed_keys
    for rid, record in fold.typed.items():
        kind = record.get("type")
        if kind not in kinds:
            continue
        task = _text(record, "task")
        if task is None:
            continue
        if kind == DEP:
            blocker = _text(record, "blocked_by")
            if blocker is not None and record.get("removed") is not True and blocker != task:
                edges.append((keys.get(rid, (0, 0)), task, blocker))
        elif kind == PARENT:
            parent = _text(record, "parent")
            if parent is not None and parent != task:
                qs.parent[task] = parent
        elif kind == CLAIM:
            if _text(record, "assignee") is not None and not record.get("released_at"):
                qs.claims.setdefault(task, []).append(record)
        elif isinstance(record.get("text"), str):
            qs.notes.setdefault(task, []).append(record)
    edges.sort(key=lambda edge: edge[0])
    for _key, task, blocker in edges:
        qs.blockers.setdefault(task, []).append(blocker)
        qs.dependents.setdefault(blocker, []).append(task)
    for task, parent in qs.parent.items():
        qs.children.setdefault(parent, []).append(task)
    for claims in qs.claims.values():
        claims.sort(key=lambda c: (ts_of(c, "claimed_at"), c["assignee"]))
    for notes in qs.notes.values():
        notes.sort(key=lambda n: (ts_of(n, "created_at"), n.get("id", "")))
    return qs


def extras(qs: QueueState, task: Record) -> Record:
    """The queue keys a task shows in JSON (DESIGN §6), only those that are set."""
    tid = task.get("id", "")
    out: Record = {}
    blockers = qs.blockers.get(tid)
    if blockers:
        out["blocked_by"] = list(blockers)
    parent = qs.parent.get(tid)
    if parent:
        out["parent"] = parent
    claim = qs.holder(task)
    if claim is not None:
        out["assignee"] = claim["assignee"]
        if isinstance(claim.get("claimed_at"), str):
            out["claimed_at"] = claim["claimed_at"]
    notes = qs.notes.get(tid)
    if notes:
        out["notes"] = [note_out(n) for n in notes]
    return out


def note_out(note: Record) -> Record:
    out: Record = {"text": note["text"]}
    for key in ("author", "created_at"):
        if isinstance(note.get(key), str):
            out[key] = note[key]
    return out


def with_extras(qs: QueueState, task: Record) -> Record:
    more = extras(qs, task)
    return {**task, **more} if more else task


# --- ready and blocked ------------------------------------------------------------------


class Entry(_Plain):
    """A task of the queue as the columns give it, before any task is decoded."""

    _fields = ("id", "priority", "created", "status", "waiting_on")

    def __init__(self, tid: str, priority: str | None, created: int, status: str,
                 waiting_on: list[str]) -> None:
        self.id = tid
        self.priority = priority
        self.created = created
        self.status = status
        self.waiting_on = waiting_on


def _open_rows(fold: Fold, qs: QueueState, *, pending_only: bool = False
               ) -> list[tuple[str, str | None, int, str, list[str]]]:
    """(id, priority, created µs, status, what it waits on that is still open) of the
    open tasks (only the pending ones with `pending_only`), from the index columns: no
    task is decoded. Most tasks wait on nothing, so only the waiting ones pay for the
    check, and the in-progress tasks are looked up only when something waited on is
    not pending."""
    pending = index.summaries(fold, ("pending",))
    waiters = qs.blockers.keys() | qs.children.keys()
    started: list[tuple[str, str | None, int]] = []
    open_ids: set[str] = set()
    if not pending_only:
        started = index.summaries(fold, ("in_progress",))
    if waiters:
        open_ids = {s[0] for s in pending}
        if not pending_only:
            open_ids.update(s[0] for s in started)
        else:
            unknown = {w for tid in waiters for w in qs.waits(tid)} - open_ids
            if len(unknown) <= _DECODE_AT_MOST:  # a few: their records say if they are open
                tasks = fold.tasks
                open_ids.update(w for w in unknown
                                if (tasks.get(w) or {}).get("status") == "in_progress")
            else:
                open_ids.update(s[0] for s in index.summaries(fold, ("in_progress",)))
    none: list[str] = []
    rows = [(tid, priority, created, "pending",
             [w for w in qs.waits(tid) if w in open_ids] if tid in waiters else none)
            for tid, priority, created in pending]
    if not pending_only:
        rows += [(tid, priority, created, "in_progress",
                  [w for w in qs.waits(tid) if w in open_ids] if tid in waiters else none)
                 for tid, priority, created in started]
    return rows


# Below this many waited-on tasks that are not pending, decoding them costs less than
# reading the status column of every task in progress.
_DECODE_AT_MOST = 200


def _rank(row: tuple[str, str | None, int, str, list[str]]) -> tuple[int, int]:
    return (PRIORITY_RANK.get(row[1], 1), row[2])


def ranked(rows: list[tuple[str, str | None, int, str, list[str]]],
             limit: int | None = None) -> list[Entry]:
    """Best first; the fold's order among equals (sorted and nsmallest are stable)."""
    if limit is not None and limit < len(rows):
        import heapq

        rows = heapq.nsmallest(limit, rows, key=_rank)
    else:
        rows.sort(key=_rank)
    return [Entry(*row) for row in rows]


def ready_rows(fold: Fold, qs: QueueState, *, exclude: Iterable[str] = ()
               ) -> list[tuple[str, str | None, int, str, list[str]]]:
    """The ready tasks as (id, priority, created µs, status, []), in no order."""
    skip = set(exclude)
    return [row for row in _open_rows(fold, qs, pending_only=True)
            if not row[4] and row[0] not in skip]


def ready(fold: Fold, qs: QueueState | None = None, *, exclude: Iterable[str] = (),
          limit: int | None = None) -> list[Entry]:
    """Pending tasks that wait on nothing open, best first (DESIGN §7); the first
    `limit` of them. A pending task is never held (see QueueState.holder), so it is
    unclaimed by definition."""
    qs = state(fold) if qs is None else qs
    return ranked(ready_rows(fold, qs, exclude=exclude), limit)


def first_ready(fold: Fold, qs: QueueState, *, exclude: Iterable[str] = ()) -> str | None:
    """The id of the best ready task (what `ready` would list first), or None."""
    rows = ready_rows(fold, qs, exclude=exclude)
    return min(rows, key=_rank)[0] if rows else None


def blocked(fold: Fold, qs: QueueState | None = None) -> list[Entry]:
    """Open tasks waiting on an open blocker (or an epic on an open child), best first."""
    qs = state(fold) if qs is None else qs
    return ranked([row for row in _open_rows(fold, qs) if row[4]])


def list_notes(fold: Fold, qs: QueueState, tasks: Iterable[Record]) -> dict[str, str]:
    """For the `tasks list` table: `@assignee` on a held task, `waits on N` on an open
    one waiting on open tasks (only the waited-on tasks are looked at)."""
    notes: dict[str, str] = {}
    if not qs.claims and not qs.blockers and not qs.children:
        return notes
    known = fold.tasks
    for task in tasks:
        tid = task.get("id", "")
        parts = []
        holder = qs.holder(task) if tid in qs.claims else None
        if holder is not None:
            parts.append(f"@{holder['assignee']}")
        if task.get("status") in OPEN_STATUSES and (tid in qs.blockers or tid in qs.children):
            waiting = sum((known.get(w) or {}).get("status") in OPEN_STATUSES
                          for w in qs.waits(tid))
            if waiting:
                parts.append(f"waits on {waiting}")
        if parts:
            notes[tid] = " · ".join(parts)
    return notes


# --- cycles -------------------------------------------------------------------------------


def find_path(graph: dict[str, list[str]], start: str, goal: str) -> list[str] | None:
    """A path start → … → goal along `graph`'s edges (breadth first: the shortest)."""
    if start == goal:
        return [start]
    previous: dict[str, str] = {start: start}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in graph.get(node, ()):
                if nxt in previous:
                    continue
                previous[nxt] = node
                if nxt == goal:
                    path = [goal]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return path[::-1]
                following.append(nxt)
        frontier = following
    return None


def wait_graph(qs: QueueState) -> dict[str, list[str]]:
    """task → what it waits on: its blockers and (for an epic) its children."""
    graph: dict[str, list[str]] = {}
    for task, blockers in qs.blockers.items():
        graph.setdefault(task, []).extend(blockers)
    for parent, children in qs.children.items():
        graph.setdefault(parent, []).extend(children)
    return graph


def short(tid: str) -> str:
    """The id as people type it: its hex part."""
    return tid.rpartition("_")[2] or tid


def _cycle_check(graph: dict[str, list[str]], waiter: str, waited: str, what: str) -> None:
    """Refuse the edge waiter → waited when waited already reaches waiter."""
    path = find_path(graph, waited, waiter)
    if path is not None:
        raise DependencyCycle(what, [short(n) for n in [waiter, *path]])


# --- writes -------------------------------------------------------------------------------


def _stamp(previous: Record | None) -> str:
    return format_ts(next_updated_at(previous))


def dep_id(task: str, blocker: str) -> str:
    return f"{DEP}:{task}:{blocker}"


def parent_id(task: str) -> str:
    return f"{PARENT}:{task}"


def claim_id(task: str, assignee: str) -> str:
    return f"{CLAIM}:{task}:{assignee}"


def _dep_record(fold: Fold, task: str, blocker: str, *, removed: bool = False) -> Record:
    rid = dep_id(task, blocker)
    record: Record = {"type": DEP, "id": rid, "task": task, "blocked_by": blocker}
    if removed:
        record["removed"] = True
    record["updated_at"] = _stamp(fold.typed.get(rid))
    return record


def _parent_record(fold: Fold, task: str, parent: str | None) -> Record:
    rid = parent_id(task)
    record: Record = {"type": PARENT, "id": rid, "task": task}
    if parent is not None:
        record["parent"] = parent
    record["updated_at"] = _stamp(fold.typed.get(rid))
    return record


def _self_dependency(tid: str) -> InvalidInput:
    return InvalidInput(f"Invalid dependency: task {short(tid)} cannot wait on itself; "
                        "give another task's id")


def _resolve_all(fold: Fold, refs: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(resolve_id(fold.tasks, ref) for ref in refs))


def _check_parent(graph: dict[str, list[str]], tid: str, parent: str) -> None:
    if parent == tid:
        raise InvalidInput(f"Invalid parent: task {short(tid)} cannot be its own parent; "
                           "give another task's id")
    _cycle_check(graph, parent, tid, f"making {short(parent)} the parent of {short(tid)}")


def add(
    log: TaskLog,
    description: str,
    *,
    priority: str = "medium",
    tags: Sequence[str] = (),
    session: str | None = None,
    discovered_during: str | None = None,
    blocked_by: Sequence[str] = (),
    parent: str | None = None,
) -> Record:
    """File a task that waits on others and/or belongs to an epic: one locked write of
    the task and its queue records. Only the epic waits on the new task, so the one
    cycle it can close runs from one of its blockers to the epic: refused, nothing
    written."""
    validate_description(description)
    done: list[Record] = []

    def change(fold: Fold) -> list[Record]:
        blockers = _resolve_all(fold, blocked_by)
        epic = resolve_id(fold.tasks, parent) if parent is not None else None
        task = new_task(description, priority=priority, tags=list(tags), session=session,
                        discovered_during=discovered_during)
        records = [task, *(_dep_record(fold, task["id"], b) for b in blockers)]
        if epic is not None:
            graph = wait_graph(state(fold))
            for blocker in blockers:
                path = find_path(graph, blocker, epic)
                if path is not None:
                    cycle = [task["id"], *path, task["id"]]
                    raise DependencyCycle(
                        f"a new task under {short(epic)} waiting on {short(blocker)}",
                        [short(n) for n in cycle])
            records.append(_parent_record(fold, task["id"], epic))
        done[:] = [task]
        return records

    log.update(change)
    return done[0]


class Linked(_Plain):
    """What block/unblock/set_parent did: the task, the ids changed and left alone."""

    _fields = ("task", "changed", "unchanged")

    def __init__(self, task: Record, changed: list[str], unchanged: list[str]) -> None:
        self.task = task
        self.changed = changed
        self.unchanged = unchanged


def block(log: TaskLog, ref: str, on: Sequence[str]) -> Linked:
    """`ref` waits on every task of `on`. A dependency that would close a cycle is
    refused (DependencyCycle, exit 2) and nothing is written."""
    if not on:
        raise InvalidInput("Missing --on: give the id of a task it waits on")
    result: list[Linked] = []

    def change(fold: Fold) -> list[Record]:
        tid = resolve_id(fold.tasks, ref)
        blockers = _resolve_all(fold, on)
        if tid in blockers:
            raise _self_dependency(tid)
        qs = state(fold)
        graph = wait_graph(qs)
        have = set(qs.blockers.get(tid, ()))
        records, added, already = [], [], []
        for blocker in blockers:
            if blocker in have:
                already.append(blocker)
                continue
            _cycle_check(graph, tid, blocker,
                         f"making {short(tid)} wait on {short(blocker)}")
            graph.setdefault(tid, []).append(blocker)
            records.append(_dep_record(fold, tid, blocker))
            added.append(blocker)
        result[:] = [Linked(fold.tasks[tid], added, already)]
        return records

    log.update(change)
    return result[0]


def unblock(log: TaskLog, ref: str, on: Sequence[str]) -> Linked:
    if not on:
        raise InvalidInput("Missing --on: give the id of a task it waits on")
    result: list[Linked] = []

    def change(fold: Fold) -> list[Record]:
        tid = resolve_id(fold.tasks, ref)
        blockers = _resolve_all(fold, on)
        have = set(state(fold).blockers.get(tid, ()))
        records, removed, absent = [], [], []
        for blocker in blockers:
            if blocker in have:
                records.append(_dep_record(fold, tid, blocker, removed=True))
                removed.append(blocker)
            else:
                absent.append(blocker)
        result[:] = [Linked(fold.tasks[tid], removed, absent)]
        return records

    log.update(change)
    return result[0]


# --- claims -------------------------------------------------------------------------------


def validate_actor(value: str) -> str:
    return clean_text(value, what="assignee name", limit=MAX_ACTOR)


def default_actor(root: os.PathLike[str] | str | None = None) -> str:
    """AIDP_ACTOR, else git's user.email, else the login name (DESIGN §7)."""
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


class Claimed(_Plain):
    _fields = ("task", "claim", "changed", "shown")

    def __init__(self, task: Record, claim: Record, changed: bool, shown: Record) -> None:
        self.task = task
        self.claim = claim
        self.changed = changed
        self.shown = shown  # the task with its queue keys after the claim (JSON output)


def why_nothing_ready(fold: Fold, qs: QueueState, skipped: int = 0) -> str:
    """What the open tasks are doing instead, e.g. "2 blocked, 1 in progress"."""
    waiting = blocked(fold, qs)
    parts = []
    if waiting:
        parts.append(f"{len(waiting)} blocked")
    started = index.summaries(fold, ("in_progress",))
    if started:
        parts.append(f"{len(started)} in progress")
    if skipped:
        parts.append(f"{skipped} already tried in this run")
    return ", ".join(parts) or "no open tasks"


def _nothing_ready(fold: Fold, qs: QueueState, skipped: int) -> NothingReady:
    return NothingReady(f"Nothing ready to claim ({why_nothing_ready(fold, qs, skipped)}); "
                        "see 'aidp tasks blocked'")


def _release_records(claims: Iterable[Record]) -> list[Record]:
    out = []
    for claim in claims:
        released = dict(claim)
        stamp = _stamp(claim)
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
        qs = state(fold)
        if ref is None:
            found = first_ready(fold, qs, exclude=skip)
            if found is None:
                tried = set(skip)
                raise _nothing_ready(fold, qs, sum(e.id in tried for e in ready(fold, qs)))
            tid = found
        else:
            tid = resolve_id(fold.tasks, ref)
        task = fold.tasks[tid]
        status = task.get("status")
        label = short(tid)
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
                listed = ", ".join(short(w) for w in waiting)
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
        stamp = _stamp(fold.typed.get(rid))
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
    return _release_records(state(fold).claims.get(tid, ()))


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
        qs = state(fold)
        ids = _resolve_all(fold, refs)
        if claimed_before is not None:
            ids += [tid for tid in stale(fold, qs, claimed_before) if tid not in ids]
        for tid in ids:
            status = fold.tasks[tid].get("status")
            if status in CLOSED_STATUSES:
                raise ClaimRefused(f"Cannot release task {short(tid)}: it is {status}; "
                                   f"use 'aidp tasks reopen {short(tid)}' to put it back")
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


# --- edit and note ------------------------------------------------------------------------


def edit(
    log: TaskLog,
    ref: str,
    *,
    description: str | None = None,
    priority: str | None = None,
    add_tags: Sequence[str] = (),
    remove_tags: Sequence[str] = (),
    parent: str | None = None,
    detach: bool = False,
) -> Change:
    """Change a task's description, priority, tags or epic in one locked write: a new
    snapshot of the task (so `history` keeps the old values) and/or a parent record.
    Anything refused (a bad value, a cycle) writes nothing at all."""
    if parent is not None and detach:
        raise InvalidInput("Conflicting --parent and --no-parent: give one of them")
    if (description is None and priority is None and not add_tags and not remove_tags
            and parent is None and not detach):
        raise InvalidInput("Nothing to edit: give --description, --priority, --add-tag, "
                           "--remove-tag, --parent or --no-parent")
    text = validate_description(description) if description is not None else None
    level = validate_priority(priority) if priority is not None else None
    adding = [validate_tag(t) for t in add_tags]
    removing = [t.strip() for t in remove_tags]
    result: list[Change] = []

    def change(fold: Fold) -> list[Record]:
        tid = resolve_id(fold.tasks, ref)
        task = fold.tasks[tid]
        records: list[Record] = []
        if parent is not None or detach:
            epic = resolve_id(fold.tasks, parent) if parent is not None else None
            qs = state(fold)
            current = qs.parent.get(tid)
            if epic != current:
                if epic is not None:
                    graph = wait_graph(qs)
                    if current is not None:  # the old epic stops waiting on it
                        graph[current] = [n for n in graph.get(current, []) if n != tid]
                    _check_parent(graph, tid, epic)
                records.append(_parent_record(fold, tid, epic))
        updated = dict(task)
        if text is not None:
            updated["description"] = text
        if level is not None:
            updated["priority"] = level
        tags = [t for t in task.get("tags") or [] if t not in removing]
        updated["tags"] = list(dict.fromkeys([*tags, *adding]))
        if canonical(updated) != canonical(task):
            updated["updated_at"] = _stamp(task)
            task = canonical(updated)
            records.insert(0, task)
        result[:] = [Change(task, changed=bool(records))]
        return records

    log.update(change)
    return result[0]


def note(log: TaskLog, ref: str, text: str, *, author: str | None = None) -> Record:
    """Append a note to a task; notes are never changed, so every clone's are kept."""
    body = clean_text(text, what="note", limit=MAX_NOTE)
    who = validate_actor(author) if author else None
    result: list[Record] = []

    def change(fold: Fold) -> list[Record]:
        tid = resolve_id(fold.tasks, ref)
        stamp = _stamp(None)
        record: Record = {"type": NOTE, "id": f"{NOTE}:{tid}:{os.urandom(4).hex()}",
                          "task": tid, "text": body}
        if who:
            record["author"] = who
        record["created_at"] = stamp
        record["updated_at"] = stamp
        result[:] = [record]
        return [record]

    log.update(change)
    return result[0]


# --- the queue's events, for history ------------------------------------------------------


def events(log: TaskLog, tid: str) -> list[tuple[tuple[int, int], str]]:
    """Every queue record about `tid` as ((updated_at µs, line), what it says), oldest
    first, equal records once: dependencies, parents, claims, releases and notes."""
    seen: set[bytes] = set()
    out: list[tuple[tuple[int, int], str]] = []
    from aidp.log import dumps

    for number, _raw, record in log.scan():
        if record is None or record.get("task") != tid:
            continue
        kind = record.get("type")
        if kind not in (DEP, PARENT, CLAIM, NOTE):
            continue
        fingerprint = dumps(dict(sorted(record.items())))
        if fingerprint in seen:
            continue
        seen.add(fingerprint)
        out.append(((ts_of(record), number), describe(record)))
    out.sort(key=lambda pair: pair[0])
    return out


def describe(record: Record) -> str:
    kind = record.get("type")
    if kind == DEP:
        other = short(str(record.get("blocked_by", "?")))
        return (f"no longer waits on {other}" if record.get("removed") is True
                else f"waits on {other}")
    if kind == PARENT:
        parent = record.get("parent")
        return f"parent: {short(parent)}" if isinstance(parent, str) else "parent removed"
    if kind == CLAIM:
        who = record.get("assignee", "?")
        return f"released by {who}" if record.get("released_at") else f"claimed by {who}"
    author = record.get("author")
    return f"note{f' by {author}' if author else ''}: {record.get('text', '')}"
