"""What the backlog looks like: the stats `tasks stats` draws, and the backlog as `aidp
report` pages it (docs/guide.md, "aidp report"): the stats and the burndown
(aidp.backlog.insights), every task as stored with the keys it shows beside its record
(the one join: aidp.backlog.queue.shown, kept apart), the work queue and every session's
TODO list. Plain values; aidp.views.charts and aidp.views.page draw them."""

from __future__ import annotations

import copy
from typing import Any

from aidp import todos
from aidp.app.project import Project
from aidp.backlog import insights, queue
from aidp.core.model import format_ts, ts_of


def report_data(project: Project, *, now: int, current_session: str | None = None
                ) -> dict[str, Any]:
    """Everything the page shows (`now`, µs: when it was made, and when leases are
    judged), `current_session`'s TODO list first."""
    fold = project.read()
    counts = fold.status_counts()
    if None in counts:
        everything = list(fold.tasks.values())
    else:
        everything = fold.select([s for s in counts if s is not None])
    qs = queue.state(fold)
    ready = [e.id for e in queue.ready(fold)]
    blocked = [{"id": e.id, "waiting_on": list(e.waiting_on)} for e in queue.blocked(fold)]
    extras = {}
    for tid, keys in queue.shown_apart(qs, everything).items():
        keys.pop("notes", None)  # the page shows none: they would only weigh it
        if keys:
            extras[tid] = keys
    lists = []
    for todo in todos.all_lists(fold):
        held = copy.copy(todo)
        held.active = True  # a cleared list shows what it held, as `todo list` reports
        shown = todos.show_json(held)
        shown.update(active=todo.active and bool(todo.items), updated_at=todo.updated_at,
                     current=todo.session == current_session)
        lists.append(shown)
    lists.sort(key=lambda t: (not t["current"], -ts_of({"updated_at": t["updated_at"]})))
    return {
        "project": project.root.name,
        "generated_at": format_ts(now),
        "stats": insights.from_fold(fold, now=now),
        "burndown": insights.burndown(everything, now=now),
        "tasks": everything,
        "extras": extras,
        "queue": {"ready": ready, "blocked": blocked},
        "todos": lists,
    }


def stats(project: Project, *, now: int,
          filters: insights.Filters | None = None) -> dict[str, Any]:
    """What `tasks stats` shows (insights.from_fold): counts by status and priority,
    filed and finished per week, ages, tags, of the tasks `filters` keeps."""
    return insights.from_fold(project.read(), now=now, filters=filters)
