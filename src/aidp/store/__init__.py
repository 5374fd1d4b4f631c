"""The store: the folded state of the log in SQLite, and every question asked of it.

`load(log)` → a `Fold` equal to `log.full_fold()` (tests hold them equal on random
logs), its tasks read from the log only when asked for. The questions below take a
fold: the store's fold answers with a query, a plain `Fold` (small logs, any doubt
about the cache) with a loop over its tasks, to the same result. Modules: `db` (the
file, its schema), `fill` (lines into rows through `aidp.fold`'s rule), `loader` (when
the store may be trusted, bringing it up to date), `view` (the loaded fold). Nothing
here prints; docs/architecture.md has the design and the measurements behind it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Iterator
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
    "CACHE_DIR", "NAME", "StoreFold", "created_at_most", "created_stamps", "find", "load",
    "narrowed", "oldest", "priority_counts", "select", "select_updated", "status_counts",
    "summaries", "tag_counts", "week_counts",
]


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _in(statuses: Collection[str] | None) -> tuple[str, list[Any]]:
    """A WHERE clause keeping the rows whose status is one of `statuses` (None: all)."""
    if statuses is None:
        return "", []
    wanted = list(dict.fromkeys(statuses))
    return f"WHERE status IN ({', '.join('?' * len(wanted))})", wanted


def _rows(fold: StoreFold, sql: str, params: list[Any]) -> list[Any]:
    return fold.db.execute(sql, params).fetchall()


def _plain(fold: Fold, statuses: Collection[str] | None) -> Iterator[Record]:
    """A plain fold's tasks whose status is one of `statuses` (None: all), in order."""
    wanted = None if statuses is None else set(statuses)
    return (t for t in fold.tasks.values() if wanted is None or _text(t.get("status")) in wanted)


def select(fold: Fold, statuses: Collection[str]) -> list[Record]:
    """The tasks whose status is one of `statuses`, in the fold's order."""
    if isinstance(fold, StoreFold):
        return fold.rows.where(*_in(statuses))
    return list(_plain(fold, statuses))


def select_updated(fold: Fold, statuses: Collection[str], since: int) -> list[Record]:
    """The tasks whose status is one of `statuses` and whose winning record was updated
    at or after `since` (µs), in the fold's order."""
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        return fold.rows.where(f"{where} AND updated >= ?", [*params, since])
    return [t for t in _plain(fold, statuses) if ts_of(t) >= since]


def status_counts(fold: Fold) -> dict[str | None, int]:
    """How many tasks have each status (None: missing or not a string)."""
    if isinstance(fold, StoreFold):
        return dict(_rows(fold, "SELECT status, count(*) FROM task GROUP BY status", []))
    return _count(_text(t.get("status")) for t in fold.tasks.values())


def _count(keys: Iterator[Any]) -> dict[Any, int]:
    counts: dict[Any, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    return counts


def summaries(fold: Fold, statuses: Collection[str]) -> list[tuple[str, str | None, int]]:
    """(id, priority, created_at µs) of the tasks whose status is one of `statuses`, in
    the fold's order; priority is None when missing or not a string."""
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        return _rows(fold, f"SELECT id, priority, created FROM task {where} ORDER BY seq",
                     params)
    return [(t["id"], _text(t.get("priority")), ts_of(t, "created_at"))
            for t in _plain(fold, statuses)]


def tag_counts(fold: Fold, statuses: Collection[str] | None = None) -> dict[str, int]:
    """How many tasks carry each tag (`aidp.fold.task_tags`), among those whose status is
    one of `statuses` (None: every task); tags no task carries are left out."""
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        return dict(_rows(fold, f"SELECT tag, count(*) FROM tag {where} GROUP BY tag", params))
    return _count(tag for t in _plain(fold, statuses) for tag in task_tags(t))


def priority_counts(fold: Fold, statuses: Collection[str]) -> dict[str | None, int]:
    """How many tasks whose status is one of `statuses` have each priority (None:
    missing or not a string)."""
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        return dict(_rows(fold, f"SELECT priority, count(*) FROM task {where} "
                          "GROUP BY priority", params))
    return _count(_text(t.get("priority")) for t in _plain(fold, statuses))


def oldest(fold: Fold, statuses: Collection[str]) -> str | None:
    """The id of the task with the smallest created_at µs (unreadable ones are the
    smallest) among those whose status is one of `statuses`, the first in the fold's
    order among equals; None when there is none."""
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        found = _rows(fold, f"SELECT id FROM task {where} ORDER BY created, seq LIMIT 1",
                      params)
        return found[0][0] if found else None
    first = min(summaries(fold, statuses), key=lambda s: s[2], default=None)
    return None if first is None else first[0]


def week_counts(fold: Fold, kind: str, statuses: Collection[str] | None = None,
                since: int = UNKNOWN_TS) -> dict[int, int]:
    """How many tasks (whose status is one of `statuses`; None: every task) were created
    (kind "created": `created_at`) or finished (kind "finished": `model.finished_at`)
    in each ISO week from the one holding `since` on, keyed by the week's Monday 00:00
    UTC in µs; unreadable stamps and empty weeks are left out."""
    if kind not in ("created", "finished"):
        raise ValueError(f"unknown kind {kind!r}")
    since = week_start(since) if since != UNKNOWN_TS else UNKNOWN_TS + 1
    if not isinstance(fold, StoreFold):
        stamps = (ts_of(t, "created_at") if kind == "created" else finished_at(t)
                  for t in _plain(fold, statuses))
        return _count(week_start(s) for s in stamps if s is not None and s >= since)
    where, params = _in(statuses)
    where = f"{where} AND" if where else "WHERE"
    # Weeks from 1970 on are counted by SQLite; earlier ones here (its integer division
    # truncates where Python's floors).
    week = f"({kind} - {kind} % {DAY} - (({kind} / {DAY} + 3) % 7) * {DAY})"
    counts = dict(_rows(fold, f"SELECT {week}, count(*) FROM task {where} {kind} >= "
                        "max(0, ?) GROUP BY 1", [*params, since]))
    for (early,) in _rows(fold, f"SELECT {kind} FROM task {where} {kind} < 0 AND "
                          f"{kind} >= ?", [*params, since]):
        counts[week_start(early)] = counts.get(week_start(early), 0) + 1
    return counts


def created_stamps(fold: Fold, statuses: Collection[str] | None = None) -> list[int]:
    """created_at µs (UNKNOWN_TS when unreadable) of every task, or of those whose
    status is one of `statuses`, in no particular order."""
    if isinstance(fold, StoreFold):
        where, params = _in(statuses)
        return [row[0] for row in _rows(fold, f"SELECT created FROM task {where}", params)]
    return [ts_of(t, "created_at") for t in _plain(fold, statuses)]


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


# --- tasks list: any filter, any sort ----------------------------------------------------

# tasks.sort_key as SQL: newest first; equal stamps, later in the fold first.
_ORDER = {"created": "created DESC, seq DESC", "updated": "updated DESC, seq DESC",
          "priority": "CASE priority WHEN 'high' THEN 0 WHEN 'low' THEN 2 ELSE 1 END, "
                      "created DESC, seq DESC"}


def _narrowing(q: Any) -> tuple[str, list[Any]]:
    """A WHERE clause keeping the rows that match the filters of the query `q`
    (aidp.tasks.Query) that are columns, exactly as tasks.find reads them."""
    where, params = _in(q.statuses)
    parts = [where.removeprefix("WHERE ")] if where else []
    if q.priorities:  # model.priority_key: missing or null is medium
        ors = [f"priority = '{p}'" for p in ("high", "medium", "low") if p in q.priorities]
        if "medium" in q.priorities:
            ors.append("priority IS NULL")
        if "other" in q.priorities:
            ors.append("priority NOT IN ('high', 'medium', 'low')")
        parts.append(f"({' OR '.join(ors) or '0'})")
    if q.tags:
        parts.append(f"seq IN (SELECT seq FROM tag WHERE tag IN ({', '.join('?' * len(q.tags))}))")
        params += list(q.tags)
    for value, test in ((q.created_from, "created >= ?"), (q.created_before, "created < ?"),
                        (q.session, "session = ?")):
        if value is not None:
            parts.append(test)
            params.append(value)
    return ("WHERE " + " AND ".join(parts)) if parts else "", params


def find(fold: Fold, q: Any) -> tuple[list[Record], dict[str, int]] | None:
    """tasks.find of the fold's tasks with `q`: the tasks found (sorted, at most q.limit)
    and how many of each status matched, from one query that decodes only the tasks
    returned; None when `fold` is not the store's or `q` asks more than columns
    (--grep, --assignee: `narrowed` then gives what tasks.find filters)."""
    if not isinstance(fold, StoreFold) or q.grep is not None or q.assignee is not None:
        return None
    where, params = _narrowing(q)
    matched = {str(s): n for s, n in _rows(
        fold, f"SELECT status, count(*) FROM task {where} GROUP BY status", params)}
    limit = -1 if q.limit is None else q.limit
    return fold.rows.where(where, params, _ORDER[q.sort], limit), matched


def narrowed(fold: Fold, q: Any) -> list[Record] | Any:
    """The fold's tasks that may match `q` (its filters that are columns, as a query for
    the store's fold), in the fold's order: what tasks.find then filters."""
    if isinstance(fold, StoreFold):
        return fold.rows.where(*_narrowing(q))
    return fold.tasks.values() if q.statuses is None else select(fold, q.statuses)


class _Reader:
    load = staticmethod(load)


use_reader(_Reader(), unless_set=True)  # TaskLog.read goes through the store from now on
