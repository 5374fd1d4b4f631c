"""What the backlog looks like: the series `tasks stats` draws and `aidp report` pages.

Pure: everything is computed from a `Fold` (or plain task records) and a `now`, and
returned as plain values; `render` draws them in the terminal and `aidp.views.page` as SVG.

Definitions (docs/guide.md, "Stats and charts"):
- weeks are ISO weeks, Monday 00:00 UTC; the series holds the last `WEEKS`, the
  current one last;
- a task is *filed* at its `created_at` and *finished* when it went done or abandoned
  (`completed_at` / `abandoned_at`, else its last update); a task that is open again
  counts as filed only;
- ages are counted from `created_at`; a missing or unreadable one is "unknown".
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

from aidp.core.model import (  # week_start and finished_at are defined there (the store uses them)
    CLOSED_STATUSES,
    DAY,
    OPEN_STATUSES,
    UNKNOWN_TS,
    Record,
    finished_at,
    priority_key,
    ts_of,
    week_start,
)
from aidp.core.plain import Plain
from aidp.tasklist.fold import Fold, task_tags

WEEKS = 12
TOP_TAGS = 10
WEEK = 7 * DAY

# (label, lower bound in days, upper bound in days or None): open tasks by age.
AGE_BUCKETS: tuple[tuple[str, int, int | None], ...] = (
    ("under 1 day", 0, 1),
    ("1-7 days", 1, 7),
    ("1-4 weeks", 7, 28),
    ("1-3 months", 28, 91),
    ("3-12 months", 91, 365),
    ("over 1 year", 365, None),
)
UNKNOWN_AGE = "unknown"
_AGE_LIMITS = [high for _label, _low, high in AGE_BUCKETS if high is not None]


class Filters(Plain):
    """Which tasks the series count: created at or after `since` (µs), filed in
    `session`, carrying any of `tags`. All empty: every task."""

    _fields = ("since", "session", "tags")

    def __init__(
        self, since: int | None = None, session: str | None = None, tags: Sequence[str] = ()
    ) -> None:
        self.since = since
        self.session = session
        self.tags = tuple(tags)

    def __bool__(self) -> bool:
        return self.since is not None or self.session is not None or bool(self.tags)

    def admits(self, task: Record) -> bool:
        if self.since is not None and ts_of(task, "created_at") < self.since:
            return False
        if self.session is not None and task.get("session") != self.session:
            return False
        return not self.tags or not set(self.tags).isdisjoint(task_tags(task))

    def to_json(self) -> dict[str, Any]:
        return {
            "since": _iso(self.since) if self.since is not None else None,
            "session": self.session,
            "tags": list(self.tags),
        }


# --- time -------------------------------------------------------------------------


def _date(micros: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(micros // 1_000_000))


def _iso(micros: int) -> str:
    from aidp.core.model import format_ts

    return format_ts(micros)


def _week_label(micros: int) -> str:
    from datetime import UTC, datetime

    year, week, _day = datetime.fromtimestamp(micros // 1_000_000, UTC).isocalendar()
    return f"{year}-W{week:02d}"


# --- the series -------------------------------------------------------------------


class _Tally:
    """Accumulates the series one task at a time."""

    def __init__(self, now: int, weeks: int) -> None:
        self.now = now
        self.first_week = week_start(now) - (weeks - 1) * WEEK
        self.weeks = weeks
        self.status: dict[str | None, int] = {}
        self.filed = [0] * weeks
        self.done = [0] * weeks
        self.abandoned = [0] * weeks
        self.open_tasks: list[tuple[str, str | None, int]] = []
        self.ages = [0] * (len(AGE_BUCKETS) + 1)  # the last: unknown
        self.tags: dict[str, int] = {}

    def _week(self, micros: int) -> int | None:
        if micros == UNKNOWN_TS or micros < self.first_week:
            return None
        n = (micros - self.first_week) // WEEK
        return n if n < self.weeks else None  # a stamp in the future: after the window

    def filed_at(self, created: int) -> None:
        n = self._week(created)
        if n is not None:
            self.filed[n] += 1

    def finished(self, status: str, micros: int) -> None:
        n = self._week(micros)
        if n is not None:
            (self.done if status == "done" else self.abandoned)[n] += 1

    def open_task(self, tid: str, priority: str | None, created: int,
                  tags: Iterable[str] = ()) -> None:
        self.open_tasks.append((tid, priority, created))
        if created == UNKNOWN_TS:
            self.ages[-1] += 1
        else:
            days = max(0, self.now - created) // DAY
            self.ages[bisect_right(_AGE_LIMITS, days)] += 1
        for tag in tags:
            self.tags[tag] = self.tags.get(tag, 0) + 1

    def result(self, filters: Filters) -> dict[str, Any]:
        from aidp.backlog.tasks import stats_of_counts

        out = stats_of_counts(self.status, self.open_tasks)
        starts = [self.first_week + n * WEEK for n in range(self.weeks)]
        out["weeks"] = [
            {
                "week": _week_label(start),
                "start": _date(start),
                "filed": self.filed[n],
                "done": self.done[n],
                "abandoned": self.abandoned[n],
                "finished": self.done[n] + self.abandoned[n],
            }
            for n, start in enumerate(starts)
        ]
        out["open_age"] = [
            {"bucket": label, "min_days": low, "max_days": high, "count": self.ages[n]}
            for n, (label, low, high) in enumerate(AGE_BUCKETS)
        ] + [{"bucket": UNKNOWN_AGE, "min_days": None, "max_days": None,
              "count": self.ages[-1]}]
        ranked = sorted(self.tags.items(), key=lambda pair: (-pair[1], pair[0]))
        out["top_tags"] = [{"tag": tag, "count": n} for tag, n in ranked[:TOP_TAGS]]
        out["filters"] = filters.to_json()
        return out


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def from_tasks(tasks: Iterable[Record], *, now: int, filters: Filters | None = None,
               weeks: int = WEEKS) -> dict[str, Any]:
    """The stats of these tasks: the plain fold over every record (the reference)."""
    filters = filters or Filters()
    tally = _Tally(now, weeks)
    for task in tasks:
        if filters and not filters.admits(task):
            continue
        status = _text(task.get("status"))
        tally.status[status] = tally.status.get(status, 0) + 1
        tally.filed_at(ts_of(task, "created_at"))
        if status in OPEN_STATUSES:
            tally.open_task(task["id"], _text(task.get("priority")),
                            ts_of(task, "created_at"), task_tags(task))
        elif status in CLOSED_STATUSES:
            tally.finished(status, finished_at(task))  # type: ignore[arg-type]
    return tally.result(filters)


def from_fold(fold: Fold, *, now: int, filters: Filters | None = None,
              weeks: int = WEEKS) -> dict[str, Any]:
    """The same as `from_tasks(fold.tasks.values(), …)`; without filters, the store's
    fold answers from its counts and columns and decodes no task; with filters, only
    the tasks its columns cannot tell apart from matching ones are decoded."""
    filters = filters or Filters()
    if filters:  # the filters are columns: the fold narrows, from_tasks decides
        from aidp.backlog.tasks import Query

        narrowed = fold.narrowed(Query(statuses=None, tags=filters.tags,
                                       session=filters.session, created_from=filters.since))
        return from_tasks(narrowed, now=now, filters=filters, weeks=weeks)
    counts = fold.status_counts()
    if None in counts:  # a task without a readable status is in no column's selection
        return from_tasks(fold.tasks.values(), now=now, filters=filters, weeks=weeks)
    tally = _Tally(now, weeks)
    tally.status = dict(counts)
    # Weekly counts kept in the snapshot: no task is decoded for the series.
    first = tally.first_week
    for week, n in fold.week_counts("created", since=first).items():
        slot = tally._week(week)  # a week's Monday falls in the same slot as its days
        if slot is not None:
            tally.filed[slot] += n
    for status in CLOSED_STATUSES:
        series = tally.done if status == "done" else tally.abandoned
        for week, n in fold.week_counts("finished", (status,), since=first).items():
            slot = tally._week(week)
            if slot is not None:
                series[slot] += n
    # Ages from how many open tasks were created by each bound: a bucket is a
    # difference of two counts (days >= L exactly when created <= now - L days); an
    # indexed fold bisects the created stamps its listing heads keep in order.
    total, at_most = fold.created_at_most(
        OPEN_STATUSES, [UNKNOWN_TS, *(now - limit * DAY for limit in _AGE_LIMITS)])
    unknown = at_most[0]
    edges = [total - unknown, *(n - unknown for n in at_most[1:]), 0]
    tally.ages = [edges[n] - edges[n + 1] for n in range(len(AGE_BUCKETS))] + [unknown]
    tally.tags = fold.tag_counts(OPEN_STATUSES)  # from the tags column
    out = tally.result(filters)
    by_priority = dict.fromkeys(out["open_by_priority"], 0)
    for priority, n in fold.priority_counts(OPEN_STATUSES).items():
        by_priority[priority_key(priority)] += n
    out["open_by_priority"] = by_priority
    out["oldest_open"] = fold.oldest(OPEN_STATUSES)
    return out


# --- burndown (the report) --------------------------------------------------------


def burndown(tasks: Sequence[Record], *, now: int, days: int = WEEKS * 7) -> list[dict[str, Any]]:
    """Open tasks at the end of each of the last `days` days (UTC), oldest first: filed
    by then and not finished by then. A task that was reopened counts as open since it
    was filed (its earlier closing is history: `tasks history`); a task without a
    readable created_at has no place in time and is left out."""
    from bisect import bisect_right

    created: list[int] = []
    closed: list[int] = []
    for task in tasks:
        filed = ts_of(task, "created_at")
        if filed == UNKNOWN_TS:
            continue
        created.append(filed)
        stamp = finished_at(task)
        if stamp is not None:
            closed.append(max(stamp, filed))  # never finished before it was filed
    created.sort()
    closed.sort()
    today = (now // DAY) * DAY
    out = []
    for n in range(days - 1, -1, -1):
        start = today - n * DAY
        cut = min(start + DAY, now + 1)  # exclusive: the end of that day, or now
        out.append({
            "date": _date(start),
            "open": bisect_right(created, cut - 1) - bisect_right(closed, cut - 1),
        })
    return out

