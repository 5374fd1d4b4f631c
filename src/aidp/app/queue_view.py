"""The work queue as a page shows it: the tasks ready to pick up, best first, and the
open tasks waiting on others, with what they wait on. Only the tasks shown are decoded:
without a filter that needs the task itself, the store's query stops at the limit."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from aidp.app.project import Project
from aidp.backlog import queue
from aidp.backlog.ids import short_ids
from aidp.core.errors import InvalidInput
from aidp.core.model import Record, priority_key, validate_priority
from aidp.core.plain import Plain
from aidp.tasklist.log import Fold


def _filtered(fold: Fold, entries: list[queue.Entry], *, tags: Sequence[str],
              session: str | None, limit: int | None) -> list[Record]:
    """The tasks of `entries` that have one of `tags` and were filed in `session`, at
    most `limit`: decoded 200 at a time up to the limit (none filtered: just `limit`)."""
    if not tags and session is None:
        return fold.tasks_of([e.id for e in entries[:limit]])
    tag_set = {t.strip() for t in tags}
    found: list[Record] = []
    for at in range(0, len(entries), 200):
        for task in fold.tasks_of([e.id for e in entries[at:at + 200]]):
            if limit is not None and len(found) >= limit:
                return found
            if tag_set and not tag_set.intersection(task.get("tags") or ()):
                continue
            if session is not None and task.get("session") != session:
                continue
            found.append(task)
    return found


def _priorities(priorities: Collection[str]) -> set[str]:
    return {validate_priority(p) for p in priorities}


def _check_limit(limit: int | None) -> None:
    if limit is not None and limit < 0:
        raise InvalidInput(f"Invalid --limit {limit}: use a whole number ≥ 0")


class Ready(Plain):
    """The ready tasks found: `tasks` (records; with a summary, with what they show
    beside them: their type, claim) or `shown` (with their queue keys); with a
    summary, how many are ready in all (`total`), why none is (`why_none`:
    when no task is ready at all), the short id of each found (`short_ids`), and the
    claim of each found task in progress, whose holder's lease ran out (`stale`: a
    claim takes it over)."""

    _fields = ("tasks", "shown", "total", "why_none", "short_ids", "stale")

    def __init__(self, tasks: list[Record], shown: list[Record] | None = None,
                 total: int | None = None, why_none: str | None = None,
                 short_ids: dict[str, str] | None = None,
                 stale: dict[str, Record] | None = None) -> None:
        self.tasks = tasks
        self.shown = shown
        self.total = total
        self.why_none = why_none
        self.short_ids = short_ids
        self.stale = {} if stale is None else stale


def ready_tasks(project: Project, *, priorities: Collection[str] = (),
                tags: Sequence[str] = (), session: str | None = None,
                limit: int | None = None, summary: bool = False) -> Ready:
    """Tasks to work on now: pending, unclaimed, waiting on nothing open; best first,
    of `priorities`, with one of `tags`, filed in `session`, at most `limit`, as shown;
    with `summary`, the tasks as they are and what a summary of them says."""
    wanted = _priorities(priorities)
    _check_limit(limit)
    fold = project.read()
    entries = queue.ready(fold, priorities=wanted,
                          limit=limit if not tags and session is None else None)
    found = _filtered(fold, entries, tags=tags, session=session, limit=limit)
    if not summary:
        return Ready(found, queue.shown(fold, found))
    total = queue.ready_count(fold)
    if not found:
        return Ready(found, total=total, why_none=None if total else
                     queue.why_nothing_ready(fold))
    # The found tasks' own records (one query): their types, and the holders of those
    # in progress (a stale claim: ready offers it after the fresh ones).
    qs = queue.state(fold, about=[t["id"] for t in found], own=True)
    stale = {t["id"]: holder for t in found
             if t.get("status") == "in_progress" and (holder := qs.holder(t)) is not None}
    return Ready(queue.shown_with(qs, found), total=total,
                 short_ids=short_ids(fold, [t["id"] for t in found]), stale=stale)


class Blocked(Plain):
    """The open tasks waiting on open ones (`tasks`), each as shown with what it waits
    on (`shown`: its queue keys and `waiting_on`), what each waits on (`waiting_on`: id
    → ids), the queue state of them and of what they wait on (`links`: which waited-on
    task is a child), how many tasks are blocked in all, filters aside (`total`); with a
    summary, the waited-on tasks (`related`: None for an id in no task) and the short
    id of every task named (`short_ids`)."""

    _fields = ("tasks", "shown", "waiting_on", "links", "total", "related", "short_ids")

    def __init__(self, tasks: list[Record], shown: list[Record],
                 waiting_on: dict[str, list[str]], links: queue.QueueState, total: int,
                 related: dict[str, Record | None] | None = None,
                 short_ids: dict[str, str] | None = None) -> None:
        self.tasks = tasks
        self.total = total
        self.shown = shown
        self.waiting_on = waiting_on
        self.links = links
        self.related = {} if related is None else related
        self.short_ids = short_ids


def blocked_tasks(project: Project, *, priorities: Collection[str] = (),
                  tags: Sequence[str] = (), session: str | None = None,
                  limit: int | None = None, summary: bool = False) -> Blocked:
    """Open tasks waiting on an open task, best first, filtered as `ready_tasks`."""
    fold = project.read()
    entries = queue.blocked(fold)
    total = len(entries)
    wanted = _priorities(priorities)
    if wanted:
        entries = [e for e in entries if priority_key(e.priority) in wanted]
    _check_limit(limit)
    found = _filtered(fold, entries, tags=tags, session=session, limit=limit)
    waiting = {e.id: e.waiting_on for e in entries}
    # The links of the tasks shown and of those they wait on (which of them are children).
    named = [tid for t in found for tid in (t["id"], *waiting[t["id"]])]
    links = queue.state(fold, about=named, own=True)
    shown = [{**task, "waiting_on": waiting[task["id"]]}
             for task in queue.shown(fold, found, links)]
    blocked = Blocked(found, shown, {t["id"]: waiting[t["id"]] for t in found}, links, total)
    if summary:
        blocked.related = {other: fold.tasks.get(other) for t in found
                           for other in waiting[t["id"]]}
        blocked.short_ids = short_ids(fold, named)
    return blocked
