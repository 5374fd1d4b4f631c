"""The read path: the folded state of a log, answered from a snapshot kept up to date.

A full fold parses every line and builds a dict per task: about a second and 150 MB
at 100,000 events. Commands run many times a minute, so reads go through a derived
snapshot under `.aidp/cache/` (git-ignored, rebuilt whenever in doubt). The public
interface is small:

- `load(log)` → a `Fold` whose fields mean exactly what `log.full_fold()`'s do (tests
  hold them equal on random logs);
- `select(fold, statuses)`, `status_counts(fold)`, `summaries(fold, statuses)`: the
  common queries, answered from the columns without decoding every task (and by a
  loop over the tasks for a plain `Fold`).

Modules: `loader` (when the snapshot may be trusted, and bringing it up to date),
`snapshot` (its file format), `columns` (what it holds, and building it with the fold
rule of `aidp.fold`), `lazy` (the mappings a loaded `Fold` gets), `reader` (pread
access to the log). Nothing here prints. docs/architecture.md has the design.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from aidp.fold import task_tags
from aidp.index.columns import finished_stamp, status_key, summary, week_of
from aidp.index.lazy import LazyTasks
from aidp.index.loader import load, warm
from aidp.index.snapshot import CACHE_DIR, SNAPSHOT_NAME
from aidp.log import use_reader
from aidp.model import ts_of

if TYPE_CHECKING:
    from aidp.index.listing import Listed
    from aidp.log import Fold
    from aidp.model import Record

__all__ = [
    "CACHE_DIR",
    "SNAPSHOT_NAME",
    "created_at_most",
    "created_stamps",
    "listed",
    "load",
    "oldest",
    "priority_counts",
    "select",
    "select_updated",
    "status_counts",
    "summaries",
    "tag_counts",
    "warm",
    "week_counts",
]


def select(fold: Fold, statuses: Collection[str]) -> list[Record]:
    """The tasks whose status is one of `statuses`, in the fold's order."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.select(statuses)
    wanted = set(statuses)
    return [t for t in tasks.values() if status_key(t) in wanted]


def listed(fold: Fold, statuses: Collection[str]) -> Listed | None:
    """The tasks with these (open) statuses in `tasks list`'s default order, as the
    elements of its JSON output (index/listing.py); None: take the general path."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.listing(statuses)
    return None


def status_counts(fold: Fold) -> dict[str | None, int]:
    """How many tasks have each status (None: missing or not a string)."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.status_counts()
    counts: dict[str | None, int] = {}
    for task in tasks.values():
        key = status_key(task)
        counts[key] = counts.get(key, 0) + 1
    return counts


def summaries(fold: Fold, statuses: Collection[str]) -> list[tuple[str, str | None, int]]:
    """(id, priority, created_at µs) of the tasks whose status is one of `statuses`, in
    the fold's order; priority is None when missing or not a string."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.summaries(statuses)
    wanted = set(statuses)
    return [summary(t) for t in tasks.values() if status_key(t) in wanted]


def tag_counts(fold: Fold, statuses: Collection[str] | None = None) -> dict[str, int]:
    """How many tasks carry each tag (`aidp.fold.task_tags`), among those whose status is
    one of `statuses` (None: every task); tags no task carries are left out. An indexed
    fold answers from its tags column without decoding a task."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.tag_counts(statuses)
    wanted = None if statuses is None else set(statuses)
    counts: dict[str, int] = {}
    for task in tasks.values():
        if wanted is None or status_key(task) in wanted:
            for tag in task_tags(task):
                counts[tag] = counts.get(tag, 0) + 1
    return counts


def priority_counts(fold: Fold, statuses: Collection[str]) -> dict[str | None, int]:
    """How many tasks whose status is one of `statuses` have each priority (None: missing
    or not a string); an indexed fold counts its columns, decoding no task."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.priority_counts(statuses)
    counts: dict[str | None, int] = {}
    for _tid, priority, _created in summaries(fold, statuses):
        counts[priority] = counts.get(priority, 0) + 1
    return counts


def oldest(fold: Fold, statuses: Collection[str]) -> str | None:
    """The id of the task with the smallest created_at µs (ts_of's value; unreadable ones
    are the smallest) among those whose status is one of `statuses`, the first in fold
    order among equals; None when there is none."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.oldest(statuses)
    found: tuple[int, str] | None = None
    for tid, _priority, created in summaries(fold, statuses):
        if found is None or created < found[0]:
            found = (created, tid)
    return None if found is None else found[1]


def week_counts(fold: Fold, kind: str, statuses: Collection[str] | None = None
                ) -> dict[int, int]:
    """How many tasks (whose status is one of `statuses`; None: every task) were created
    (kind "created": `created_at`) or finished (kind "finished": `insights.finished_at`)
    in each ISO week, keyed by the week's Monday 00:00 UTC in µs; unreadable stamps and
    empty weeks are left out. An indexed fold answers from counts kept in the snapshot,
    without decoding a task."""
    if kind not in ("created", "finished"):
        raise ValueError(f"unknown kind {kind!r}")
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.week_counts(kind, statuses)
    wanted = None if statuses is None else set(statuses)
    counts: dict[int, int] = {}
    for task in tasks.values():
        if wanted is None or status_key(task) in wanted:
            stamp = ts_of(task, "created_at") if kind == "created" else finished_stamp(task)
            week = week_of(stamp)
            if week is not None:
                counts[week] = counts.get(week, 0) + 1
    return counts


def created_stamps(fold: Fold, statuses: Collection[str] | None = None) -> list[int]:
    """created_at µs (ts_of's value when unreadable) of every task, or of those whose
    status is one of `statuses`, in no particular order; an indexed fold answers from
    its columns."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.created_stamps(statuses)
    wanted = None if statuses is None else set(statuses)
    return [ts_of(t, "created_at") for t in tasks.values()
            if wanted is None or status_key(t) in wanted]


def created_at_most(fold: Fold, statuses: Collection[str], bounds: list[int]
                    ) -> tuple[int, list[int]]:
    """How many tasks have one of `statuses`, and how many of them were created at or
    before each of `bounds` (µs; an unreadable created_at counts as UNKNOWN_TS): an
    indexed fold answers from its listing heads (open statuses), reading no task."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        found = tasks.created_at_most(statuses, bounds)
        if found is not None:
            return found
    from bisect import bisect_right

    created = sorted(created_stamps(fold, statuses))
    return len(created), [bisect_right(created, bound) for bound in bounds]


def select_updated(fold: Fold, statuses: Collection[str], since: int) -> list[Record]:
    """The tasks whose status is one of `statuses` and whose winning record was updated
    at or after `since` (µs), in the fold's order; an indexed fold decodes only those."""
    tasks = fold.tasks
    if isinstance(tasks, LazyTasks):
        return tasks.select(statuses, updated_from=since)
    wanted = set(statuses)
    return [t for t in tasks.values() if status_key(t) in wanted and ts_of(t) >= since]


class _Reader:
    load = staticmethod(load)
    warm = staticmethod(warm)


use_reader(_Reader(), unless_set=True)  # TaskLog.read goes through the snapshot from now on
