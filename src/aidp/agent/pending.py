"""The pending backlog at the start of a run: the lines `aidp run` prints, and the open
tasks with the ready ones first (the order the first prompt lists them in)."""

from __future__ import annotations

from typing import Any

from aidp.backlog import tasks as backlog
from aidp.tasklist.log import Fold

START_BACKLOG = 5  # pending tasks listed when a run starts


def ready_first(fold: Fold, tasks: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The tasks with the ready ones first, in the queue's order (aidp.backlog.queue), and how
    many are ready; the others keep their order."""
    from aidp.backlog import queue

    order = {entry.id: n for n, entry in enumerate(queue.ready(fold))}
    ready = sorted((t for t in tasks if t["id"] in order), key=lambda t: order[t["id"]])
    return ready + [t for t in tasks if t["id"] not in order], len(ready)


def pending_summary(fold: Fold, *, limit: int = START_BACKLOG) -> list[str]:
    """Lines for the pending backlog at the start of a run, ready tasks first."""
    from aidp.views.render import priority_marker

    query = backlog.Query(statuses=("pending",), sort="priority")
    pending, _ready = ready_first(fold, backlog.query(fold.select(("pending",)), query))
    if not pending:
        return ["📋 No pending tasks"]
    lines = [f"📋 Pending tasks ({len(pending)}):"]
    shown = pending[:limit]
    ids = backlog.short_ids(fold, [t["id"] for t in shown])
    for task in shown:
        marker = priority_marker(task.get("priority"))
        tid = ids.get(task["id"], task["id"])
        lines.append(f"  {marker} {task.get('description', '')} ({tid})")
    if len(pending) > limit:
        lines.append(f"  … and {len(pending) - limit} more (see all: aidp tasks list pending)")
    return lines
