"""The whole backlog at a glance, as a board shows it (`aidp board`, docs/guide.md "The
board"): every open task as shown (its queue keys: holder, lease, links), the most
recently closed ones, the queue's marks (ready; waiting on what), each holder
session's plan progress, and what waits on a person.

What waits on a person: a paused TODO list (its agent stopped to ask), and an open task
tagged `decision` (a question only a person answers) with every open task that waits on
it (`blocked_by`).
"""

from __future__ import annotations

from aidp import todos
from aidp.app.project import Project
from aidp.backlog import queue
from aidp.core.model import OPEN_STATUSES, Record, finished_at, ts_of
from aidp.core.plain import Plain

DECISION_TAG = "decision"  # an open task tagged so is a question for a person
RECENT = 50  # closed tasks shown per closed status, the most recently closed


class Plan(Plain):
    """A session's TODO list as a board shows it: its progress (`done` of `total` items),
    the item it works on now (`current`: the first in progress, else the first pending),
    whether it is paused and why, whose it is, and when it last changed."""

    _fields = ("session", "done", "total", "current", "paused", "reason", "owner",
               "updated_at")

    def __init__(self, todo: todos.TodoList) -> None:
        items = todo.visible
        statuses = [todos.derived_status(item) for item in items]
        self.session = todo.session
        self.done = statuses.count("completed")
        self.total = len(items)
        working = [i for i, s in zip(items, statuses, strict=True) if s == "in_progress"]
        waiting = [i for i, s in zip(items, statuses, strict=True) if s == "pending"]
        first = (working or waiting)[:1]
        self.current: str | None = first[0]["content"] if first else None
        self.paused = todo.paused and bool(items)
        self.reason = todo.pause_reason
        self.owner = todo.owner
        self.updated_at = todo.updated_at


class Overview(Plain):
    """What a board shows of one project:

    tasks       the open tasks and the most recent closed ones, as shown (queue.shown:
                holder, claimed_at, lease_until, stale, blocked_by, parent, notes, type,
                close reason), open ones first
    counts      how many tasks of each status there are in all
    ready       the ids of the pending tasks ready to pick up
    waiting_on  open task id -> the open tasks it waits on (a blocker, an epic's child)
    plans       task id -> the plan of the session its holder's claim works in (when
                that session has a list)
    paused      the paused TODO lists, newest change first
    decisions   the open tasks tagged `decision`
    damaged     how many lines of the tasklist are damaged (`aidp tasks repair`)
    """

    _fields = ("tasks", "counts", "ready", "waiting_on", "plans", "paused", "decisions",
               "damaged")

    def __init__(self, tasks: list[Record], counts: dict[str, int], ready: list[str],
                 waiting_on: dict[str, list[str]], plans: dict[str, Plan],
                 paused: list[Plan], decisions: list[str], damaged: int) -> None:
        self.tasks = tasks
        self.counts = counts
        self.ready = ready
        self.waiting_on = waiting_on
        self.plans = plans
        self.paused = paused
        self.decisions = decisions
        self.damaged = damaged


def overview(project: Project, *, recent: int = RECENT, now: int | None = None) -> Overview:
    """The board of `project` now: open tasks, the `recent` most recently closed of each
    closed status, the queue's marks and the plans (`now`, µs: when leases are judged;
    default the clock)."""
    from aidp.backlog.tasks import Query, find_in

    fold = project.read()
    open_tasks = fold.select(OPEN_STATUSES)
    closed: list[Record] = []
    for status in queue.CLOSED_STATUSES:
        # The last changed first (one query on the store), then by when each closed.
        found = find_in(fold, Query(statuses=(status,), sort="updated", limit=recent)).tasks
        found.sort(key=lambda t: (finished_at(t) or ts_of(t)), reverse=True)
        closed += found
    tasks = [*open_tasks, *closed]
    qs = queue.state(fold, about=[t["id"] for t in tasks], own=True)
    linked = queue.linked_ids(qs)  # only these show more than their record
    shown = [queue.with_extras(qs, t, now) if t["id"] in linked else t for t in tasks]
    counts = {str(status): n for status, n in fold.status_counts().items()}
    waiting = {entry.id: list(entry.waiting_on) for entry in queue.blocked(fold)}
    # Ready: pending (so held by nobody) and waiting on nothing open.
    ready = [t["id"] for t in open_tasks if t.get("status") == "pending" and t["id"] not in waiting]
    lists = {todo.session: todo for todo in todos.all_lists(fold)}
    plans: dict[str, Plan] = {}
    for task in open_tasks:
        holder = qs.holder(task) if task["id"] in qs.claims else None
        session = holder.get("session") if holder is not None else None
        if isinstance(session, str) and session in lists and lists[session].visible:
            plans[task["id"]] = Plan(lists[session])
    paused = [Plan(todo) for todo in lists.values() if todo.paused and todo.visible]
    paused.sort(key=lambda plan: plan.updated_at or "", reverse=True)
    decisions = [t["id"] for t in open_tasks if DECISION_TAG in (t.get("tags") or ())]
    return Overview(shown, counts, ready, waiting, plans, paused, decisions, fold.damaged)
