"""Filing a task: what makes two tasks the same (a File task signal, MCP `tasks_file`: not
filed again while an open task has its text), and what filing did. The writes are
`tasks.add` (one append, no read) and `queue.file` (with links, or unless open), chosen
by aidp.app.filing."""

from __future__ import annotations

from aidp.core.model import OPEN_STATUSES, Record, ts_of
from aidp.core.plain import Plain
from aidp.tasklist.log import Fold


def same_text(description: str) -> str:
    """What makes two descriptions "the same task" for File task dedupe: equal after
    collapsing runs of whitespace (and trimming) and case folding."""
    return " ".join(description.split()).casefold()


def open_duplicate(fold: Fold, description: str) -> Record | None:
    """An open task (pending or in progress) whose description is the same as this one
    (same_text), the oldest such; decodes only the open tasks."""
    key = same_text(description)
    found = [t for t in fold.select(OPEN_STATUSES)
             if type(t.get("description")) is str and same_text(t["description"]) == key]
    return min(found, key=lambda t: (t.get("created_at") or "", t["id"])) if found else None


def recent_duplicate(fold: Fold, description: str, since: int) -> Record | None:
    """A task of any status filed at or after `since` (µs) whose description is the same
    as this one (same_text), the newest such: the newest tasks first, read until one is
    older (a run's own filings: `aidp run --parallel` files a description once per run,
    closed since or not)."""
    key = same_text(description)
    for batch in fold.newest_first(200):
        for task in batch:
            if ts_of(task, "created_at") < since:
                return None
            if type(task.get("description")) is str and same_text(task["description"]) == key:
                return task
    return None


class Filed(Plain):
    """What filing a task did: the new task, or the open one with the same description
    (`filed` False), and the shortest id prefix that names it."""

    __slots__ = ("filed", "short_id", "task")

    def __init__(self, task: Record, filed: bool, short_id: str) -> None:
        self.task = task
        self.filed = filed
        self.short_id = short_id
