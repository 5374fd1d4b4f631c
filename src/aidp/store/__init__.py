"""The store: the folded state of the log in SQLite, and every question asked of it.

A plain fold parses every line and builds a dict per task: about a second and 150 MB
at 100,000 events. Commands run many times a minute, so reads go through a database
under `.aidp/cache/` (git-ignored, rebuilt whenever in doubt) that holds the winning
record of every id as a row — status, priority, stamps, tags in their own table, and
where its line is — brought up to date with the log's new lines on every read.

- `load(log)` → a `Fold` whose fields mean exactly what `log.full_fold()`'s do (tests
  hold them equal on random logs), its tasks read from the log only when asked for;
- the questions below take a fold: a store's fold answers with a query, a plain
  `Fold` (small logs, any doubt about the cache) with a loop over its tasks.

Modules: `db` (the file, its schema, whether it may be trusted), `fill` (lines into
rows, through `aidp.fold`'s rule), `loader` (when the store may be trusted, bringing it
up to date), `view` (the mappings a loaded fold gets). Nothing here prints.
docs/architecture.md has the design and the measurements behind it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from aidp.fold import task_tags
from aidp.log import use_reader
from aidp.model import DAY, UNKNOWN_TS, finished_at, ts_of, week_start
from aidp.stamp import CACHE_DIR
from aidp.store.db import NAME
from aidp.store.loader import load
from aidp.store.view import StoreFold

if TYPE_CHECKING:
    from aidp.log import Fold
    from aidp.model import Record

__all__ = [
    "CACHE_DIR", "NAME", "created_at_most", "created_stamps", "load", "oldest",
    "priority_counts", "select", "select_updated", "status_counts", "summaries",
    "tag_counts", "week_counts",
]


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _in(statuses: Collection[str] | None, column: str = "status") -> tuple[str, list[Any]]:
    """A WHERE clause keeping the rows whose status is one of `statuses` (None: all)."""
    if statuses is None:
        return "", []
    wanted = list(dict.fromkeys(statuses))
    return f"WHERE {column} IN ({', '.join('?' * len(wanted))})", wanted


def _rows(fold: StoreFold, sql: str, params: list[Any]) -> list[Any]:
    return fold.db.execute(sql, params).fetchall()


def select(fold: Fold, statuses: Collection[str]) -> list[Record]:
    """The tasks whose status is one of `statuses`, in the fold's order."""
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        return fold.rows.where(where, tuple(params))
    wanted = set(statuses)
    return [t for t in fold.tasks.values() if _text(t.get("status")) in wanted]


def select_updated(fold: Fold, statuses: Collection[str], since: int) -> list[Record]:
    """The tasks whose status is one of `statuses` and whose winning record was updated
    at or after `since` (µs), in the fold's order."""
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        return fold.rows.where(f"{where} AND updated >= ?", (*params, since))
    wanted = set(statuses)
    return [t for t in fold.tasks.values()
            if _text(t.get("status")) in wanted and ts_of(t) >= since]


def status_counts(fold: Fold) -> dict[str | None, int]:
    """How many tasks have each status (None: missing or not a string)."""
    if isinstance(fold, StoreFold):
        return dict(_rows(fold, "SELECT status, count(*) FROM task GROUP BY status", []))
    counts: dict[str | None, int] = {}
    for task in fold.tasks.values():
        key = _text(task.get("status"))
        counts[key] = counts.get(key, 0) + 1
    return counts


def summaries(fold: Fold, statuses: Collection[str]) -> list[tuple[str, str | None, int]]:
    """(id, priority, created_at µs) of the tasks whose status is one of `statuses`, in
    the fold's order; priority is None when missing or not a string."""
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        return _rows(fold, f"SELECT id, priority, created FROM task {where} ORDER BY seq",
                     params)
    wanted = set(statuses)
    return [(t["id"], _text(t.get("priority")), ts_of(t, "created_at"))
            for t in fold.tasks.values() if _text(t.get("status")) in wanted]


def tag_counts(fold: Fold, statuses: Collection[str] | None = None) -> dict[str, int]:
    """How many tasks carry each tag (`aidp.fold.task_tags`), among those whose status is
    one of `statuses` (None: every task); tags no task carries are left out."""
    if isinstance(fold, StoreFold):
        if statuses is None:
            return dict(_rows(fold, "SELECT tag, count(*) FROM tag GROUP BY tag", []))
        where, params = _in(statuses, "task.status")
        return dict(_rows(fold, "SELECT tag, count(*) FROM tag JOIN task USING (seq) "
                          f"{where} GROUP BY tag", params))
    wanted = None if statuses is None else set(statuses)
    counts: dict[str, int] = {}
    for task in fold.tasks.values():
        if wanted is None or _text(task.get("status")) in wanted:
            for tag in task_tags(task):
                counts[tag] = counts.get(tag, 0) + 1
    return counts


def priority_counts(fold: Fold, statuses: Collection[str]) -> dict[str | None, int]:
    """How many tasks whose status is one of `statuses` have each priority (None:
    missing or not a string)."""
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        return dict(_rows(fold, f"SELECT priority, count(*) FROM task {where} "
                          "GROUP BY priority", params))
    counts: dict[str | None, int] = {}
    for _tid, priority, _created in summaries(fold, statuses):
        counts[priority] = counts.get(priority, 0) + 1
    return counts


def oldest(fold: Fold, statuses: Collection[str]) -> str | None:
    """The id of the task with the smallest created_at µs (unreadable ones are the
    smallest) among those whose status is one of `statuses`, the first in fold order
    among equals; None when there is none."""
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        found = _rows(fold, f"SELECT id FROM task {where} ORDER BY created, seq LIMIT 1",
                      params)
        return found[0][0] if found else None
    best: tuple[int, str] | None = None
    for tid, _priority, created in summaries(fold, statuses):
        if best is None or created < best[0]:
            best = (created, tid)
    return None if best is None else best[1]


def week_counts(fold: Fold, kind: str, statuses: Collection[str] | None = None
                ) -> dict[int, int]:
    """How many tasks (whose status is one of `statuses`; None: every task) were created
    (kind "created": `created_at`) or finished (kind "finished": `model.finished_at`)
    in each ISO week, keyed by the week's Monday 00:00 UTC in µs; unreadable stamps and
    empty weeks are left out."""
    if kind not in ("created", "finished"):
        raise ValueError(f"unknown kind {kind!r}")
    counts: dict[int, int] = {}
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        where = f"{where} AND" if where else "WHERE"
        # Weeks from 1970 on are counted by SQLite; earlier ones (rare) here: its integer
        # division truncates where Python's floors.
        week = f"({kind} - {kind} % {DAY} - (({kind} / {DAY} + 3) % 7) * {DAY})"
        counts.update(_rows(fold, f"SELECT {week}, count(*) FROM task {where} {kind} >= 0 "
                            f"GROUP BY 1", params))
        for (early,) in _rows(fold, f"SELECT {kind} FROM task {where} {kind} < 0 AND "
                              f"{kind} != {UNKNOWN_TS}", params):
            start = week_start(early)
            counts[start] = counts.get(start, 0) + 1
        return counts
    wanted = None if statuses is None else set(statuses)
    for task in fold.tasks.values():
        if wanted is None or _text(task.get("status")) in wanted:
            if kind == "created":
                stamp: int | None = ts_of(task, "created_at")
            else:
                stamp = finished_at(task)
            if stamp is not None and stamp != UNKNOWN_TS:
                start = week_start(stamp)
                counts[start] = counts.get(start, 0) + 1
    return counts


def created_stamps(fold: Fold, statuses: Collection[str] | None = None) -> list[int]:
    """created_at µs (UNKNOWN_TS when unreadable) of every task, or of those whose
    status is one of `statuses`, in no particular order."""
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        return [row[0] for row in _rows(fold, f"SELECT created FROM task {where}", params)]
    wanted = None if statuses is None else set(statuses)
    return [ts_of(t, "created_at") for t in fold.tasks.values()
            if wanted is None or _text(t.get("status")) in wanted]


def created_at_most(fold: Fold, statuses: Collection[str], bounds: list[int]
                    ) -> tuple[int, list[int]]:
    """How many tasks have one of `statuses`, and how many of them were created at or
    before each of `bounds` (µs; an unreadable created_at counts as UNKNOWN_TS)."""
    if isinstance(fold, StoreFold) and bounds:
        where, params = _in(statuses)
        sums = ", ".join("total(created <= ?)" for _ in bounds)
        row = _rows(fold, f"SELECT count(*), {sums} FROM task {where}", [*bounds, *params])[0]
        return row[0], [int(n) for n in row[1:]]
    created = sorted(created_stamps(fold, statuses))
    return len(created), [bisect_right(created, bound) for bound in bounds]


class _Reader:
    load = staticmethod(load)


use_reader(_Reader(), unless_set=True)  # TaskLog.read goes through the store from now on
