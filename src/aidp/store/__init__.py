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
        where, params = _in(statuses)
        return dict(_rows(fold, f"SELECT tag, count(*) FROM tag {where} GROUP BY tag", params))
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


def week_counts(fold: Fold, kind: str, statuses: Collection[str] | None = None,
                since: int = UNKNOWN_TS) -> dict[int, int]:
    """How many tasks (whose status is one of `statuses`; None: every task) were created
    (kind "created": `created_at`) or finished (kind "finished": `model.finished_at`)
    in each ISO week from the one holding `since` on, keyed by the week's Monday 00:00
    UTC in µs; unreadable stamps and empty weeks are left out."""
    since = week_start(since) if since != UNKNOWN_TS else UNKNOWN_TS + 1
    if kind not in ("created", "finished"):
        raise ValueError(f"unknown kind {kind!r}")
    counts: dict[int, int] = {}
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        where = f"{where} AND" if where else "WHERE"
        # Weeks from 1970 on are counted by SQLite; earlier ones (rare) here: its integer
        # division truncates where Python's floors.
        week = f"({kind} - {kind} % {DAY} - (({kind} / {DAY} + 3) % 7) * {DAY})"
        counts.update(_rows(fold, f"SELECT {week}, count(*) FROM task {where} {kind} >= "
                            f"max(0, ?) GROUP BY 1", [*params, since]))
        for (early,) in _rows(fold, f"SELECT {kind} FROM task {where} {kind} < 0 AND "
                              f"{kind} >= ?", [*params, since]):
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
            if stamp is not None and stamp != UNKNOWN_TS and stamp >= since:
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


# tasks.sort_key as SQL: newest first; equal stamps, later in the fold first.
_ORDER = {"created": "created DESC, seq DESC", "updated": "updated DESC, seq DESC",
          "priority": "CASE priority WHEN 'high' THEN 0 WHEN 'low' THEN 2 ELSE 1 END, "
                      "created DESC, seq DESC"}


def _narrowing(q: Any) -> tuple[str, list[Any]]:
    """A WHERE clause keeping the rows that may match the filters of the query `q`
    (aidp.tasks.Query) that are columns: exactly those, as tasks.find reads them."""
    parts: list[str] = []
    params: list[Any] = []
    if q.statuses is not None:
        where, params = _in(q.statuses)
        parts.append(where.removeprefix("WHERE "))
    if q.priorities:  # model.priority_key: missing or null is medium
        wanted = set(q.priorities)
        ors = [f"priority = '{p}'" for p in ("high", "medium", "low") if p in wanted]
        if "medium" in wanted:
            ors.append("priority IS NULL")
        if "other" in wanted:
            ors.append("priority NOT IN ('high', 'medium', 'low')")
        parts.append(f"({' OR '.join(ors) or '0'})")
    if q.tags:
        parts.append(f"seq IN (SELECT seq FROM tag WHERE tag IN ({', '.join('?' * len(q.tags))}))")
        params += list(q.tags)
    for bound, test in ((q.created_from, "created >= ?"), (q.created_before, "created < ?")):
        if bound is not None:
            parts.append(test)
            params.append(bound)
    if q.session is not None:
        parts.append("session = ?")
        params.append(q.session)
    return ("WHERE " + " AND ".join(parts)) if parts else "", params


def find(fold: Fold, q: Any) -> tuple[list[Record], dict[str, int]] | None:
    """tasks.find(fold's tasks, q): the tasks found (sorted, at most q.limit) and how
    many of each status matched, with one query decoding only the tasks shown; None
    when `fold` is not the store's or `q` filters on more than columns (--grep,
    --assignee: see `narrowed`)."""
    if not isinstance(fold, StoreFold) or q.grep is not None or q.assignee is not None:
        return None
    where, params = _narrowing(q)
    matched = {str(s): n for s, n in _rows(
        fold, f"SELECT status, count(*) FROM task {where} GROUP BY status", params)}
    limit = -1 if q.limit is None else q.limit
    return fold.rows.where(where, tuple(params), _ORDER[q.sort], limit), matched


def narrowed(fold: Fold, q: Any) -> list[Record] | Any:
    """The fold's tasks that may match `q` (the filters that are columns, applied by a
    query for the store's fold), in the fold's order: what tasks.find then filters."""
    if isinstance(fold, StoreFold):
        where, params = _narrowing(q)
        return fold.rows.where(where, tuple(params))
    return fold.tasks.values() if q.statuses is None else select(fold, q.statuses)


class _Reader:
    load = staticmethod(load)


use_reader(_Reader(), unless_set=True)  # TaskLog.read goes through the store from now on
