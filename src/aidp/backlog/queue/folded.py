"""The queue as folded: who holds what, what waits on what, ready and blocked, and
the history of a task's queue records. Pure reads of a fold; the record builders and
the result of a write (Change) that claims, edits and `aidp.backlog.tasks` share."""


from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from aidp.backlog import details
from aidp.backlog.ids import short_ids
from aidp.backlog.queue.leases import judge
from aidp.core.errors import AidpError, ExitCode, InvalidInput
from aidp.core.model import (
    OPEN_STATUSES,
    UNKNOWN_TS,
    Record,
    finished_at,
    format_ts,
    next_updated_at,
    note_out,
    ts_of,
)
from aidp.core.plain import Plain
from aidp.tasklist.log import Fold, TaskLog

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


class Change(Plain):
    """What a write did to one task: the task after it, and whether anything changed."""

    _fields = ("task", "changed")

    def __init__(self, task: Record, changed: bool) -> None:
        self.task = task
        self.changed = changed


# --- the folded queue state -----------------------------------------------------------


class QueueState(Plain):
    """Dependencies, parents, claims and notes of every task, and what else it holds
    (aidp.backlog.details: body, type, close reason), from the typed records."""

    _fields = ("blockers", "dependents", "parent", "children", "claims", "notes", "details")

    def __init__(self) -> None:
        self.blockers: dict[str, list[str]] = {}  # task -> its blockers, oldest edge first
        self.dependents: dict[str, list[str]] = {}  # blocker -> the tasks it blocks
        self.parent: dict[str, str] = {}
        self.children: dict[str, list[str]] = {}
        self.claims: dict[str, list[Record]] = {}  # task -> active claims, holder first
        self.notes: dict[str, list[Record]] = {}  # task -> notes, oldest first
        self.details: dict[str, dict[str, Record]] = {}  # task -> kind -> its record

    def holder(self, task: Record) -> Record | None:
        """The claim in effect: none while the task is pending, else the earliest; on a
        closed task, only one made before it closed (a claim made on a clone that had
        not seen the close yet loses to it in the merge and is not in effect)."""
        if task.get("status") == "pending":
            return None
        claims = self.claims.get(task.get("id", ""))
        if not claims:
            return None
        closed = finished_at(task)
        if closed is not None and ts_of(claims[0], "claimed_at") > closed:
            return None  # the earliest came after the close: so did every other
        return claims[0]

    def fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    @classmethod
    def from_fields(cls, fields: tuple[Any, ...]) -> "QueueState":
        qs = cls()
        for name, value in zip(cls._fields, fields, strict=True):
            setattr(qs, name, value)
        return qs

    def waits(self, tid: str) -> list[str]:
        """What the task waits on: its blockers, then its children (an epic's)."""
        return [*self.blockers.get(tid, ()), *self.children.get(tid, ())]


def _text(record: Record, key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) and value else None


def state(fold: Fold, about: str | Collection[str] | None = None, *,
          own: bool = False, bodies: bool = False) -> QueueState:
    """The queue state of a fold. Typed records of other kinds are skipped; malformed
    queue records (a field that is not text) are ignored, like unknown types.

    With `about` (a task id, or several), only what those tasks' links need is folded
    (their blockers, dependents, parent, children, claims and notes come out exactly as
    in the whole state; other tasks' entries may be missing): `show` of one task, or
    `list --json` of the tasks it found, then does not pay for every queue record.
    With `own` too, only their own records are folded: their blockers, parent, claims
    and notes (what with_extras shows) exact, their dependents and children not.
    Bodies (up to 64 KiB each) are read only with `bodies`: `show`, not a listing."""
    qs = QueueState()
    edges: list[tuple[tuple[int, int], str, str]] = []
    kinds = (DEP, PARENT, CLAIM, NOTE, *details.KINDS)
    skip = () if bodies else (details.BODY,)
    for _rid, key, record in fold.typed_records(about, own=own, skip=skip):
        kind = record.get("type")
        if kind not in kinds:
            continue
        task = _text(record, "task")
        if task is None:
            continue
        if kind in details.KINDS:
            qs.details.setdefault(task, {})[kind] = record
        elif kind == DEP:
            blocker = _text(record, "blocked_by")
            if blocker is not None and record.get("removed") is not True and blocker != task:
                edges.append((key, task, blocker))
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


def typed_record(fold: Fold, rid: str, about: str) -> Record | None:
    """The typed record `rid` of task `about` (a claim, a dependency, its parent record),
    from the records about that task only: the store answers with one query."""
    return next((record for found, _key, record in fold.typed_records(about) if found == rid),
                None)


def extras(qs: QueueState, task: Record, now: int | None = None) -> Record:
    """The keys a task shows in JSON beside its record (docs/reference.md, "JSON
    output"), only those that are set: its type and close reason, the queue's links,
    claim (a task in progress: its lease's end, and `stale` once that passed `now`,
    default the clock now: aidp.backlog.queue.leases) and notes, and (a state folded
    with `bodies`) its body, last."""
    tid = task.get("id", "")
    held = details.shown(task, qs.details.get(tid, {}))
    body = held.pop(details.BODY, None)
    out: Record = held
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
        if task.get("status") == "in_progress":  # a lease holds an open claim only
            lease = judge(claim, now)
            if lease.until != UNKNOWN_TS:
                out["lease_until"] = format_ts(lease.until)
            if lease.stale:
                out["stale"] = True
    notes = qs.notes.get(tid)
    if notes:
        out["notes"] = [note_out(n) for n in notes]
    if body is not None:
        out[details.BODY] = body
    return out



def with_extras(qs: QueueState, task: Record, now: int | None = None) -> Record:
    more = extras(qs, task, now)
    return {**task, **more} if more else task


def shown(fold: Fold, tasks: Sequence[Record], qs: QueueState | None = None, *,
          bodies: bool = False) -> list[Record]:
    """The tasks as every surface shows them: each record with what it shows beside it
    (extras: type, close reason, blocked_by, parent, assignee, claimed_at, notes, and
    with `bodies` its body), never the fold's own record changed. The one join of a
    task and its typed records: `list`, `show`, `ready`, `blocked`, a change's JSON,
    MCP, the board. `qs`: a state the caller holds that covers these tasks; else only
    their own records are folded."""
    if qs is None:
        if not tasks:
            return []
        qs = state(fold, about=[t["id"] for t in tasks], own=True, bodies=bodies)
    return shown_with(qs, tasks)


def shown_with(qs: QueueState, tasks: Sequence[Record]) -> list[Record]:
    """`shown` from a queue state that covers the tasks."""
    linked = linked_ids(qs)
    return [with_extras(qs, t) if t.get("id") in linked else t for t in tasks]


def shown_apart(qs: QueueState, tasks: Sequence[Record]) -> dict[str, Record]:
    """`shown_with` kept apart: task id -> the keys it shows beside its record, for each
    of `tasks` that shows any (a page that holds the records as stored and these keys
    beside them: `aidp report`)."""
    linked = linked_ids(qs)
    return {t["id"]: more for t in tasks if t.get("id") in linked and (more := extras(qs, t))}


def linked_ids(qs: QueueState) -> set[str]:
    """The tasks `with_extras` may add keys to (the others are shown as they are)."""
    return (qs.blockers.keys() | qs.parent.keys() | qs.claims.keys() | qs.notes.keys()
            | qs.details.keys())


# --- ready and blocked ------------------------------------------------------------------


class Entry(Plain):
    """A task of the queue as the columns give it, before any task is decoded."""

    _fields = ("id", "priority", "created", "status", "waiting_on")

    def __init__(self, tid: str, priority: str | None, created: int, status: str,
                 waiting_on: list[str]) -> None:
        self.id = tid
        self.priority = priority
        self.created = created
        self.status = status
        self.waiting_on = waiting_on


def ready(fold: Fold, *, exclude: Iterable[str] = (), limit: int | None = None,
          priorities: Collection[str] = ()) -> list[Entry]:
    """Pending tasks that wait on nothing open, best first (docs/guide.md, "Work queue"); the first
    `limit` of them; with `priorities`, of those only. The fold's question
    (Questions.ready: one query walking a rank index on the store). A pending task is
    never held (see QueueState.holder), so it is unclaimed by definition."""
    return [Entry(tid, priority, created, "pending", []) for tid, priority, created
            in fold.ready(limit, priorities=priorities, exclude=list(exclude))]


def ready_count(fold: Fold) -> int:
    """How many tasks `ready` would list: every pending task waits on something open
    (`blocked`) or is ready, so the count reads the tallies and the blocked links, not
    every pending task (47k rows at 1M events for prime's one number)."""
    waiting = sum(entry.status == "pending" for entry in blocked(fold))
    return fold.status_counts().get("pending", 0) - waiting


def first_ready(fold: Fold, *, exclude: Iterable[str] = ()) -> str | None:
    """The id of the best ready task (what `ready` would list first), or None."""
    found = fold.ready(1, exclude=list(exclude))
    return found[0][0] if found else None


def blocked(fold: Fold) -> list[Entry]:
    """Open tasks waiting on an open task (a dependency, or an epic's child), best first:
    the fold's question (Questions.blocked: one query on the store)."""
    return [Entry(*row) for row in fold.blocked()]


def list_notes(fold: Fold, qs: QueueState, tasks: Iterable[Record]) -> dict[str, str]:
    """For the `tasks list` table: `@assignee` on a held task (`qs`: at least the
    tasks' own records), `waits on N` on an open one waiting on N open tasks."""
    waiting = {entry.id: len(entry.waiting_on) for entry in blocked(fold)}
    notes: dict[str, str] = {}
    for task in tasks:
        tid = task.get("id", "")
        parts = []
        holder = qs.holder(task) if tid in qs.claims else None
        if holder is not None:
            parts.append(f"@{holder['assignee']}")
            lease = judge(holder) if task.get("status") == "in_progress" else None
            if lease is not None and lease.stale:
                parts.append(f"stale: {lease.said()}")
        if tid in waiting and task.get("status") in OPEN_STATUSES:
            parts.append(f"waits on {waiting[tid]}")
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


def short(tid: str, fold: Fold | None = None) -> str:
    """The id as people see it: its shortest unique prefix among the tasks of `fold`, as
    every view shows it; without a fold, its hex part."""
    if fold is not None:
        return short_ids(fold, [tid])[tid]
    return tid.rpartition("_")[2] or tid


def check_cycle(graph: dict[str, list[str]], waiter: str, waited: str, what: str,
                fold: Fold | None = None) -> None:
    """Refuse the edge waiter → waited when waited already reaches waiter."""
    path = find_path(graph, waited, waiter)
    if path is not None:
        raise DependencyCycle(what, [short(n, fold) for n in [waiter, *path]])


def next_stamp(previous: Record | None) -> str:
    """The updated_at of a record written over `previous` (None: a new one): now, or
    just after the previous one's when the clock is behind it."""
    return format_ts(next_updated_at(previous))


def dep_id(task: str, blocker: str) -> str:
    return f"{DEP}:{task}:{blocker}"


def parent_id(task: str) -> str:
    return f"{PARENT}:{task}"


def claim_id(task: str, assignee: str) -> str:
    return f"{CLAIM}:{task}:{assignee}"


# --- the queue's events, for history ------------------------------------------------------


def events(log: TaskLog, tid: str, fold: Fold | None = None
           ) -> list[tuple[tuple[int, int], str, tuple[Path | None, int]]]:
    """Every queue record about `tid` as ((updated_at µs, place in the fold's order),
    what it says, (the other worktree's tasklist it is in or None, line number)), oldest
    first, equal records once: dependencies, parents, claims, releases and notes, and
    its body, type and close reason, of every worktree (docs/guide.md, "Worktrees by
    hand")."""
    seen: set[bytes] = set()
    out: list[tuple[tuple[int, int], str, tuple[Path | None, int]]] = []
    from aidp.tasklist import worktrees
    from aidp.tasklist.log import dumps

    for order, source, number, record in worktrees.records(log.shared(), log.read_lines()):
        if record is None or record.get("task") != tid:
            continue
        kind = record.get("type")
        if kind not in (DEP, PARENT, CLAIM, NOTE, *details.KINDS):
            continue
        fingerprint = dumps(dict(sorted(record.items())))
        if fingerprint in seen:
            continue
        seen.add(fingerprint)
        out.append(((ts_of(record), order), describe(record, fold), (source, number)))
    out.sort(key=lambda pair: pair[0])
    return out


def describe(record: Record, fold: Fold | None = None) -> str:
    kind = record.get("type")
    if kind == DEP:
        other = short(str(record.get("blocked_by", "?")), fold)
        return (f"no longer waits on {other}" if record.get("removed") is True
                else f"waits on {other}")
    if kind == PARENT:
        parent = record.get("parent")
        return f"parent: {short(parent, fold)}" if isinstance(parent, str) else "parent removed"
    if kind == CLAIM:
        who = record.get("assignee", "?")
        return f"released by {who}" if record.get("released_at") else f"claimed by {who}"
    if kind == details.BODY:
        text = record.get(details.BODY)
        return f"body: {details.preview(text)}" if text else "body removed"
    if kind in (details.TYPE, details.REASON):
        return f"{'type' if kind == details.TYPE else 'close reason'}: {record.get(kind, '?')}"
    author = record.get("author")
    return f"note{f' by {author}' if author else ''}: {record.get('text', '')}"
