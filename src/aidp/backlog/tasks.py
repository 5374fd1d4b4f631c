"""Backlog operations on top of the event log and the work queue: create, transition
(a task back to pending is released from its claims), query (a task's history:
aidp.backlog.history; ids: aidp.backlog.ids, whose names are kept here for callers)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from aidp.backlog import details
from aidp.backlog.ids import (
    ID_RULE,
    MIN_ID_PREFIX,
    ids_then_reason,
    resolve_all,
    resolve_id,
    short_ids,
)
from aidp.core.errors import InvalidInput
from aidp.core.model import (
    OPEN_STATUSES,
    STATUSES,
    Record,
    new_task,
    priority_key,
    priority_rank,
    transition,
    ts_of,
    validate_reason,
    validate_status,
)
from aidp.core.plain import Plain
from aidp.tasklist.log import Fold, TaskLog

if TYPE_CHECKING:
    from aidp.backlog.queue import Change, QueueState

__all__ = [  # the id names are aidp.backlog.ids', kept here for callers
    "ID_RULE", "MIN_ID_PREFIX", "SORTS", "Found", "Query", "add",
    "find", "find_in", "fold_stats", "ids_then_reason",
    "query", "resolve_all", "resolve_id", "set_status", "short_ids", "sort_key",
    "stats", "stats_of_counts",
]

SORTS = ("created", "updated", "priority")


# --- writes -------------------------------------------------------------------------


def add(
    log: TaskLog,
    description: str,
    *,
    priority: str = "medium",
    tags: Sequence[str] = (),
    session: str | None = None,
    discovered_during: str | None = None,
    body: str | None = None,
    task_type: str | None = None,
) -> Record:
    """File a new task (with its body and type: aidp.backlog.details). A new id needs no
    read of the log: just one append (a task with links, or filed unless an open one has
    its text: queue.file)."""
    body, task_type, _ = details.check(body, task_type)
    task = new_task(
        description,
        priority=priority,
        tags=list(tags),
        session=session,
        discovered_during=discovered_during,
    )
    log.append([task, *details.for_new_task(task, body=body, task_type=task_type)])
    return task


def set_status(
    log: TaskLog, refs: Iterable[str], status: str, *, reason: str | None = None,
    expect: Mapping[str, str | None] | None = None,
) -> list[Change]:
    """Move tasks to `status` in one locked read-modify-append. Every id is resolved
    before anything is written, so one bad id leaves the file as it was. `reason`: why
    (abandoned: the task's `abandoned_reason`; done: its close reason, a record of its
    own, aidp.backlog.details). `expect`: what a view showed of each task's fields,
    checked under the lock (aidp.backlog.queue.seen)."""
    status = validate_status(status)
    if reason is not None:
        if status not in ("done", "abandoned"):
            raise InvalidInput(f"Invalid reason for {status}: only done and abandoned "
                               "take one")
        reason = validate_reason(reason)
    from aidp.backlog.queue import Change, release_records

    wanted = list(refs)
    results: list[Change] = []

    def change(fold: Fold) -> list[Record]:
        results.clear()  # log.update may call this twice
        ids = [resolve_id(fold, ref) for ref in wanted]
        if expect:
            from aidp.backlog.queue.seen import check

            for tid in ids:
                check(fold, tid, expect)
        written: list[Record] = []
        latest: dict[str, Record] = {}
        for tid in ids:
            current = latest.get(tid, fold.tasks[tid])
            if current.get("status") == status:  # the same status changes nothing
                results.append(Change(current, changed=False))
                continue
            updated = transition(current, status, reason=reason)
            latest[tid] = updated
            written.append(updated)
            if status == "done" and reason is not None:
                written.append(details.close_record(fold, updated, reason))
            if status == "pending":  # back in the queue: nobody holds it any more
                written.extend(release_records(fold, tid))
            results.append(Change(updated, changed=True))
        return written

    log.update(change)
    return results


# --- queries ------------------------------------------------------------------------


class Query(Plain):
    _fields = ("statuses", "priorities", "tags", "session", "created_from", "created_before",
               "sort", "limit", "grep", "assignee", "types")

    def __init__(
        self,
        statuses: tuple[str, ...] | None = OPEN_STATUSES,  # None: any, even unknown ones
        priorities: tuple[str, ...] = (),
        tags: tuple[str, ...] = (),
        session: str | None = None,
        created_from: int | None = None,  # µs, inclusive
        created_before: int | None = None,  # µs, exclusive
        sort: str = "created",
        limit: int | None = None,
        grep: str | None = None,  # in the description or a note, case-insensitive
        assignee: str | None = None,  # the holder of its claim, case-insensitive
        types: tuple[str, ...] = (),  # its type (aidp.backlog.details), any of them
    ) -> None:
        self.statuses = statuses
        self.priorities = priorities
        self.tags = tags
        self.session = session
        self.created_from = created_from
        self.created_before = created_before
        self.sort = sort
        self.limit = limit
        self.grep = grep
        self.assignee = assignee
        self.types = types

    def by_status_only(self) -> bool:
        """Whether only the statuses narrow it (the index's fast paths answer those)."""
        return (not self.priorities and not self.tags and self.session is None
                and self.created_from is None and self.created_before is None
                and self.grep is None and self.assignee is None and not self.types)

    def needs_links(self) -> bool:
        """Whether it filters by what the typed records hold (notes, claims, types): then
        tasks.find needs the queue's state of the tasks."""
        return self.grep is not None or self.assignee is not None or bool(self.types)


def sort_key(sort: str) -> Callable[[Record], Any]:
    """The key for a stable sort of tasks given newest-written first, so that equal
    timestamps (the Ruby original wrote whole seconds) keep the file's order, reversed."""
    if sort == "updated":
        return lambda t: -ts_of(t, "updated_at")
    if sort == "priority":
        return lambda t: (priority_rank(t.get("priority")), -ts_of(t, "created_at"))
    if sort == "created":
        return lambda t: -ts_of(t, "created_at")
    raise InvalidInput(f"Invalid --sort {sort!r}: use one of {', '.join(SORTS)}")


class Found(Plain):
    """The tasks found (at most the limit) and how many of each status matched."""
    _fields = ("tasks", "matched")

    def __init__(self, tasks: list[Record], matched: dict[str, int]) -> None:
        self.tasks = tasks
        self.matched = matched


def query(tasks: Iterable[Record], q: Query, links: QueueState | None = None) -> list[Record]:
    return find(tasks, q, links).tasks


def find(tasks: Iterable[Record], q: Query, links: QueueState | None = None) -> Found:
    """The tasks that match `q`, sorted, at most q.limit of them. `links` (the queue's
    state: notes, claims, types) is needed when q.grep, q.assignee or q.types is set."""
    if q.needs_links() and links is None:
        raise TypeError("query: --grep, --assignee and --type need the queue state")
    key = sort_key(q.sort)
    statuses = set(q.statuses) if q.statuses is not None else None
    priorities = set(q.priorities)
    tags = set(q.tags)
    needle = q.grep.casefold() if q.grep is not None else None
    holder = q.assignee.casefold() if q.assignee is not None else None
    found = []
    for task in tasks:
        if statuses is not None and task.get("status") not in statuses:
            continue
        if priorities and priority_key(task.get("priority")) not in priorities:
            continue
        if tags and not tags.intersection(task.get("tags") or ()):
            continue
        if q.session is not None and task.get("session") != q.session:
            continue
        if q.created_from is not None or q.created_before is not None:
            created = ts_of(task, "created_at")
            if q.created_from is not None and created < q.created_from:
                continue
            if q.created_before is not None and created >= q.created_before:
                continue
        if holder is not None and links is not None:
            claim = links.holder(task)
            if claim is None or str(claim.get("assignee")).casefold() != holder:
                continue
        if needle is not None and links is not None and not _mentions(task, links, needle):
            continue
        if q.types and links is not None and details.value_of(links.details.get(
                task["id"], {}).get(details.TYPE), details.TYPE, details.DEFAULT_TYPE
                ) not in q.types:
            continue
        found.append(task)
    found.reverse()  # the fold yields tasks in the order they first appear in the file
    found.sort(key=key)
    from collections import Counter

    matched = dict(Counter(str(task.get("status")) for task in found))
    return Found(found[: q.limit] if q.limit is not None else found, matched)


def find_in(fold: Fold, q: Query, links: QueueState | None = None) -> Found:
    """find() over a fold's tasks. The store's fold answers the filters that are columns,
    the order and the limit with one query, decoding only the tasks it returns; with
    --grep, --assignee or --type it narrows by the columns (and, for --assignee, to the
    tasks a claim by that name is about), and without `links` only those tasks' own
    queue records are folded (their notes, claims and types: what find reads of them)."""
    answered = fold.find(q)
    if answered is not None:
        return Found(*answered)
    narrowed = fold.narrowed(q)
    if links is None and q.needs_links():
        from aidp.backlog.queue import state

        narrowed = list(narrowed)
        links = state(fold, about=[t["id"] for t in narrowed], own=True)
    return find(narrowed, q, links)


def _mentions(task: Record, links: QueueState, needle: str) -> bool:
    """Whether the description or a note holds `needle` (casefolded)."""
    description = task.get("description")
    if isinstance(description, str) and needle in description.casefold():
        return True
    return any(needle in note["text"].casefold() for note in links.notes.get(task["id"], ()))


def stats(tasks: Iterable[Record]) -> dict[str, object]:
    """Counts by status, plus by priority among open tasks and the oldest open task."""
    counts: dict[str | None, int] = {}
    open_tasks: list[tuple[str, str | None, int]] = []
    for task in tasks:
        status = task.get("status")
        key = status if isinstance(status, str) else None
        counts[key] = counts.get(key, 0) + 1
        if key in OPEN_STATUSES:
            priority = task.get("priority")
            open_tasks.append(
                (task["id"], priority if isinstance(priority, str) else None,
                 ts_of(task, "created_at"))
            )
    return stats_of_counts(counts, open_tasks)


def fold_stats(fold: Fold) -> dict[str, object]:
    """`stats` of every task in the fold; the store's fold (aidp.store) answers from its
    columns without decoding a single task."""
    return stats_of_counts(fold.status_counts(), fold.summaries(OPEN_STATUSES))


def stats_of_counts(
    counts: dict[str | None, int], open_tasks: Iterable[tuple[str, str | None, int]]
) -> dict[str, object]:
    """`stats` from the count per status and (id, priority, created_at µs) of each open
    task, in fold order (the first of equally old tasks is the oldest): what every way of
    counting (a loop over tasks, the store's columns, insights' series) ends with."""
    by_status = {status: counts.get(status, 0) for status in STATUSES}
    # model.priority_key: missing or null counts as medium; `other` is a priority this
    # version does not know (a newer writer's, a hand edit), so the parts add up to `open`.
    open_by_priority: dict[str | None, int] = {"high": 0, "medium": 0, "low": 0, "other": 0}
    oldest: tuple[int, str] | None = None
    for tid, priority, created in open_tasks:
        open_by_priority[priority_key(priority)] += 1
        if oldest is None or created < oldest[0]:
            oldest = (created, tid)
    return {
        "total": sum(counts.values()),
        **by_status,
        # A status this version does not know (a newer writer's), or none: counted so
        # that the parts add up to the total.
        "other": sum(counts.values()) - sum(by_status.values()),
        "open": by_status["pending"] + by_status["in_progress"],
        "open_by_priority": open_by_priority,
        "oldest_open": oldest[1] if oldest else None,
    }
