"""The backlog in and out of other tools' formats (`aidp tasks export`, `aidp tasks
import`; the formats themselves: aidp.interchange)."""

from __future__ import annotations

from collections.abc import Sequence

from aidp import interchange
from aidp.app.project import Project
from aidp.backlog.ids import short_ids
from aidp.core.plain import Plain


class Exported(Plain):
    """An export: its bytes, and how many tasks it holds."""

    _fields = ("data", "count")

    def __init__(self, data: bytes, count: int) -> None:
        self.data = data
        self.count = count


def export_tasks(project: Project, fmt: str, *, raw: bool = False) -> Exported:
    """Every task in the format `fmt` (interchange.EXPORT_FORMATS, checked by the
    caller); the formats that carry the queue (interchange.WITH_QUEUE) get each task as
    shown, with its body. `raw`: csv cells exactly as stored."""
    fold = project.read()
    statuses = list(fold.status_counts())  # None: a task without a (text) status
    everything = list(fold.tasks.values()) if None in statuses else fold.select(
        [s for s in statuses if s is not None])
    if fmt in interchange.WITH_QUEUE:  # blockers, epic, assignee, notes go along
        from aidp.backlog import queue

        qs = queue.state(fold, bodies=True)  # and each task's body
        everything = queue.shown_with(qs, everything)
    return Exported(interchange.dump(fmt, everything, raw=raw), len(everything))


class Imported(Plain):
    """An import (or its dry run: nothing written): what it filed or would file
    (`result`: interchange.ImportResult), and the short id of each of the first
    `shown` tasks filed (none for a dry run)."""

    _fields = ("result", "short_ids")

    def __init__(self, result: interchange.ImportResult, short: dict[str, str]) -> None:
        self.result = result
        self.short_ids = short


def import_tasks(project: Project, items: Sequence[interchange.Incoming], source: str, *,
                 dry_run: bool = False, shown: int = 20) -> Imported:
    """File `items` (interchange.parse's, from `source`); what an earlier import of the
    same items filed is skipped. `dry_run`: what would be filed, nothing written."""
    if dry_run:
        return Imported(interchange.plan_import(project.read(), items, source), {})
    project.read()  # (what a surface tells of a read, before the write)
    result = interchange.import_items(project.log, items, source)
    first = [t["id"] for t in result.filed[:shown]]
    return Imported(result, short_ids(project.read(), first))
