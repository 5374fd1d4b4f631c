"""The series of `tasks stats` and `aidp report`: their definitions, and the indexed
path answering exactly like a plain fold over every task."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aidp import store
from aidp.backlog import insights
from aidp.core.model import format_ts, parse_ts
from aidp.store.questions import StoreTasks
from aidp.tasklist.log import TaskLog

NOW = parse_ts("2026-11-25T12:00:00Z")  # a Wednesday
DAY = insights.DAY


def task(n: int, status: str = "pending", *, created: int, updated: int | None = None,
         closed: int | None = None, priority: str = "medium", tags: list[str] | None = None,
         session: str | None = None) -> dict:
    record = {
        "id": f"task_{created // 1_000_000}_{n:08x}",
        "description": f"Task {n}",
        "status": status,
        "priority": priority,
        "created_at": format_ts(created),
        "updated_at": format_ts(updated if updated is not None else (closed or created)),
        "tags": tags or [],
    }
    if session:
        record["session"] = session
    if status == "done":
        record["completed_at"] = format_ts(closed if closed is not None else created)
    if status == "abandoned":
        record["abandoned_at"] = format_ts(closed if closed is not None else created)
    return record


def test_weeks_are_iso_weeks_starting_monday_utc() -> None:
    assert format_ts(insights.week_start(NOW)) == "2026-11-23T00:00:00.000000Z"
    monday = parse_ts("2026-11-23T00:00:00Z")
    assert insights.week_start(monday) == monday
    assert insights.week_start(monday - 1) == monday - 7 * DAY


def test_filed_and_finished_land_in_their_weeks() -> None:
    tasks = [
        task(1, created=NOW - DAY),  # this week
        task(2, "done", created=NOW - 20 * DAY, closed=NOW - 2 * DAY),  # filed in the week of 11-02
        task(3, "abandoned", created=NOW - 200 * DAY, closed=NOW - 8 * DAY),  # last week
        task(4, "done", created=NOW - 400 * DAY, closed=NOW - 300 * DAY),  # before the window
    ]
    stats = insights.from_tasks(tasks, now=NOW)
    weeks = stats["weeks"]
    assert len(weeks) == 12
    assert weeks[-1]["start"] == "2026-11-23" and weeks[-1]["week"] == "2026-W48"
    assert weeks[0]["start"] == "2026-09-07"
    assert [w["filed"] for w in weeks[-4:]] == [1, 0, 0, 1]
    assert weeks[-1] | {} == {"week": "2026-W48", "start": "2026-11-23", "filed": 1,
                              "done": 1, "abandoned": 0, "finished": 1}
    assert (weeks[-2]["abandoned"], weeks[-2]["finished"]) == (1, 1)
    assert sum(w["finished"] for w in weeks) == 2


def test_a_closing_stamp_later_than_the_update_counts_as_the_update() -> None:
    record = task(1, "done", created=NOW - 30 * DAY, closed=NOW, updated=NOW - 20 * DAY)
    assert insights.finished_at(record) == NOW - 20 * DAY
    assert insights.finished_at(task(2, created=NOW)) is None
    no_stamp = task(3, "done", created=NOW - DAY, updated=NOW - 3)
    del no_stamp["completed_at"]
    assert insights.finished_at(no_stamp) == NOW - 3


def test_open_tasks_by_age_priority_and_tag() -> None:
    tasks = [
        task(1, created=NOW - 3600 * 1_000_000, tags=["bug"], priority="high"),
        task(2, "in_progress", created=NOW - 3 * DAY, tags=["bug", "ui"]),
        task(3, created=NOW - 10 * DAY, tags=["ui"], priority="low"),
        task(4, created=NOW - 500 * DAY, tags=["bug"]),
        task(5, "done", created=NOW - 2 * DAY, tags=["bug", "closed-only"]),
    ]
    broken = task(6, created=NOW)
    broken["created_at"] = "yesterday-ish"
    stats = insights.from_tasks([*tasks, broken], now=NOW)
    ages = {row["bucket"]: row["count"] for row in stats["open_age"]}
    assert ages == {"under 1 day": 1, "1-7 days": 1, "1-4 weeks": 1, "1-3 months": 0,
                    "3-12 months": 0, "over 1 year": 1, "unknown": 1}
    assert stats["top_tags"] == [{"tag": "bug", "count": 3}, {"tag": "ui", "count": 2}]
    assert stats["open_by_priority"] == {"high": 1, "medium": 3, "low": 1, "other": 0}
    assert (stats["total"], stats["open"], stats["done"]) == (6, 5, 1)


def test_filters_narrow_every_series() -> None:
    tasks = [
        task(1, created=NOW - DAY, tags=["bug"], session="a"),
        task(2, "done", created=NOW - 5 * DAY, closed=NOW - DAY, tags=["docs"], session="a"),
        task(3, created=NOW - 40 * DAY, tags=["bug"], session="b"),
    ]
    by_tag = insights.from_tasks(tasks, now=NOW, filters=insights.Filters(tags=["docs"]))
    assert (by_tag["total"], by_tag["done"], by_tag["open"]) == (1, 1, 0)
    assert by_tag["filters"] == {"since": None, "session": None, "tags": ["docs"]}
    by_session = insights.from_tasks(tasks, now=NOW, filters=insights.Filters(session="b"))
    assert by_session["total"] == 1 and by_session["top_tags"] == [{"tag": "bug", "count": 1}]
    recent = insights.from_tasks(tasks, now=NOW, filters=insights.Filters(since=NOW - 10 * DAY))
    assert recent["total"] == 2
    assert recent["filters"]["since"] == format_ts(NOW - 10 * DAY)


def test_burndown_counts_open_tasks_at_the_end_of_each_day() -> None:
    tasks = [
        task(1, created=NOW - 3 * DAY),
        task(2, "done", created=NOW - 2 * DAY, closed=NOW - DAY),
        task(3, created=NOW + DAY),  # a clock ahead: not yet filed
    ]
    days = insights.burndown(tasks, now=NOW, days=5)
    assert [d["date"] for d in days] == ["2026-11-21", "2026-11-22", "2026-11-23",
                                         "2026-11-24", "2026-11-25"]
    # 2026-11-22 12:00 filed #1; 11-23 filed #2; 11-24 finished #2.
    assert [d["open"] for d in days] == [0, 1, 2, 1, 1]


# --- through the store ---------------------------------------------------------------


@pytest.fixture
def indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    from aidp.store import fill, loader

    monkeypatch.setattr(loader, "MIN_BYTES", 0)
    monkeypatch.setattr(loader, "STRICT", True)
    monkeypatch.setattr(fill, "FLUSH_ROWS", 2)


STATUS = st.sampled_from(["pending", "in_progress", "done", "abandoned", "odd"])
OFFSET = st.integers(min_value=-200 * DAY, max_value=2 * DAY)


@st.composite
def histories(draw: st.DrawFn) -> list[dict]:
    """Tasks and later updates of them, some with odd statuses or unreadable stamps."""
    records: list[dict] = []
    for n in range(draw(st.integers(1, 25))):
        created = NOW + draw(OFFSET)
        status = draw(STATUS)
        closed = created + draw(st.integers(0, 100 * DAY))
        record = task(n, status, created=created, closed=closed,
                      priority=draw(st.sampled_from(["high", "medium", "low", "urgent"])),
                      tags=draw(st.lists(st.sampled_from(["a", "b", "c"]), max_size=2)),
                      session=draw(st.sampled_from([None, "x", "y"])))
        if draw(st.booleans()):
            record["created_at"] = "garbage"
        records.append(record)
        if draw(st.booleans()):  # a later change of the same task
            later = dict(record, status=draw(STATUS),
                         updated_at=format_ts(closed + draw(st.integers(1, 10 * DAY))),
                         tags=draw(st.lists(st.sampled_from(["a", "b", "c"]), max_size=3)))
            later.setdefault("completed_at", later["updated_at"])
            records.append(later)
    return records


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=histories(), split=st.integers(0, 30))
def test_indexed_stats_equal_the_plain_fold(indexed, tmp_path: Path, records: list[dict],
                                            split: int) -> None:
    import shutil

    root = tmp_path / "p"
    shutil.rmtree(root, ignore_errors=True)
    log = TaskLog(root)
    log.append(records[:split] or records)
    store.load(log)  # builds the store; the rest is folded into it
    if records[split:]:
        log.append(records[split:])
    fold = store.load(log)
    assert isinstance(fold, store.StoreFold)  # the store answers, not a plain fold
    plain = log.full_fold()
    expected = insights.from_tasks(plain.tasks.values(), now=NOW)
    assert insights.from_fold(fold, now=NOW) == expected
    assert insights.from_fold(plain, now=NOW) == expected
    for filters in (insights.Filters(tags=["a"]), insights.Filters(session="x"),
                    insights.Filters(since=NOW - 30 * DAY),
                    insights.Filters(since=NOW - 60 * DAY, session="y", tags=["b", "c"])):
        assert insights.from_fold(store.load(log), now=NOW, filters=filters) == \
            insights.from_tasks(plain.tasks.values(), now=NOW, filters=filters)
    for statuses in (None, ("pending", "in_progress"), ("done",), ("odd",)):
        expected: dict[str, int] = {}
        for record in plain.tasks.values():
            if statuses is None or record["status"] in statuses:
                for tag in set(record["tags"]):  # a tag listed twice is one tag
                    expected[tag] = expected.get(tag, 0) + 1
        assert fold.tag_counts(statuses) == expected
        assert plain.tag_counts(statuses) == expected


def test_indexed_stats_decode_no_open_task_for_its_tags(indexed, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The top tags come from the store's tag table: `tasks stats` decodes only the
    tasks finished inside the window, so its cost does not grow with the open backlog."""
    log = TaskLog(tmp_path)
    records = [task(n, "pending" if n % 3 else "in_progress", created=NOW - n * DAY,
                    tags=[["bug"], ["ui", "bug"], []][n % 3]) for n in range(60)]
    records.append(task(99, "done", created=NOW - 400 * DAY, closed=NOW - 300 * DAY,
                        tags=["old"]))
    log.append(records)
    store.load(log)  # the store
    fold = store.load(log)
    assert isinstance(fold, store.StoreFold)
    where = StoreTasks.where

    def only_finished(self: StoreTasks, condition: str, params: tuple = (),
                      order: str = "seq") -> list:
        assert {p for p in params if isinstance(p, str)} <= {"done", "abandoned"}, params
        return where(self, condition, params, order)

    def no_decoding(self: StoreTasks, rid: str) -> None:
        raise AssertionError("a task was decoded")

    monkeypatch.setattr(StoreTasks, "where", only_finished)
    monkeypatch.setattr(StoreTasks, "__getitem__", no_decoding)
    stats = insights.from_fold(fold, now=NOW)
    assert stats["top_tags"] == [{"tag": "bug", "count": 40}, {"tag": "ui", "count": 20}]
    assert fold.tag_counts(["done"]) == {"old": 1}


def test_filtered_stats_decode_only_the_tasks_the_columns_keep(
        indexed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tasks stats --tag T --session S --since D` through the store decodes the tasks
    that carry the tag, in the session, filed since the date: not the whole backlog."""
    log = TaskLog(tmp_path)
    records = [task(n, ["pending", "done", "in_progress"][n % 3], created=NOW - n * DAY,
                    closed=NOW - n * DAY + DAY, tags=[["bug"], ["ui"], []][n % 4 % 3],
                    session=["x", "y"][n % 2]) for n in range(80)]
    log.append(records)
    store.load(log)
    fold = store.load(log)
    assert isinstance(fold, store.StoreFold)
    decoded: list[str] = []
    record, from_rows = StoreTasks.record, StoreTasks.records

    def counting(self: StoreTasks, rid: str, *row: object) -> dict:
        decoded.append(rid)
        return record(self, rid, *row)  # type: ignore[arg-type]

    def counting_rows(self: StoreTasks, rows: list) -> list:  # open tasks: from their rows
        decoded.extend(row[0] for row in rows)
        return from_rows(self, rows)

    monkeypatch.setattr(StoreTasks, "record", counting)
    monkeypatch.setattr(StoreTasks, "records", counting_rows)
    filters = insights.Filters(since=NOW - 40 * DAY, session="x", tags=["bug"])
    stats = insights.from_fold(fold, now=NOW, filters=filters)
    wanted = {r["id"] for n, r in enumerate(records)
              if n <= 40 and n % 2 == 0 and n % 4 % 3 == 0}
    assert set(decoded) == wanted
    assert stats == insights.from_tasks(log.full_fold().tasks.values(), now=NOW,
                                        filters=filters)
    assert stats["total"] == len(wanted)
