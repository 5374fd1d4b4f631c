"""The `Fold` a read through the store returns (`aidp.store.load`): mappings that ask
the store's tables (`aidp.store.db`), each question one query, the reference answers'
(`aidp.tasklist.questions`) equal (docs/store.md, "The read path"). A task's
record comes from its row (an open task) or its line (`line.LogFile`: a line no longer
there is an error that says so, never another record)."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from functools import partial
from operator import itemgetter
from typing import Any

import orjson

from aidp.core.model import DAY, OPEN_STATUSES, UNKNOWN_TS, Record, week_start
from aidp.store.db import Handle
from aidp.tasklist.fold import Fold, FoldKey
from aidp.tasklist.line import LogFile, changed
from aidp.tasklist.questions import (
    KINDS,
    Query,
    about_only,
    common_length,
    shared_in_sorted,
)


class StoreTasks(Mapping[str, Record]):
    """id -> winning task record, in the fold's order (the line each id first came on)."""

    def __init__(self, handle: Handle, log: LogFile) -> None:
        self.handle, self.log = handle, log

    conn = property(lambda self: self.handle.conn)  # (to_memory may give it another)

    def __getitem__(self, rid: str) -> Record:
        found = self.where("WHERE id = ?", (rid,)) if type(rid) is str else None
        if not found:
            raise KeyError(rid)
        return found[0]

    def records(self, rows: Sequence[Sequence[Any]]) -> list[Record]:
        """The tasks of rows (id, off, len, body, and any further columns), in their
        order: the open ones decoded in one go from their bodies, the rest each from its
        line."""
        bodies = [row[3] for row in rows if row[3] is not None]
        if not bodies:
            return [self.record(row[0], row[1], row[2]) for row in rows]
        decoded = orjson.loads(b"[" + b",".join(bodies) + b"]")
        if len(bodies) == len(rows):  # open tasks only (`list`'s usual question)
            return decoded  # type: ignore[no-any-return]
        each, record = iter(decoded), self.record
        return [next(each) if row[3] is not None else record(row[0], row[1], row[2])
                for row in rows]

    def record(self, rid: str, off: int, size: int) -> Record:
        """A closed task's record: its line in the log, or (`off` -1: a task two clones
        changed concurrently) its record folded field by field (fields.merge_all)."""
        if off >= 0:
            return self.log.record(rid, off, size)
        found = self.conn.execute("SELECT record FROM merged WHERE id = ?", (rid,)).fetchone()
        if found is None:
            raise changed()
        return orjson.loads(found[0])  # type: ignore[no-any-return]

    def __contains__(self, rid: object) -> bool:
        return type(rid) is str and self.conn.execute(
            "SELECT 1 FROM task WHERE id = ?", (rid,)).fetchone() is not None

    def __iter__(self) -> Iterator[str]:
        return (row[0] for row in self.conn.execute("SELECT id FROM task ORDER BY seq"))

    def __len__(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM task").fetchone()[0])

    def values(self) -> Any:  # a list, in the fold's order (Mapping's __eq__ reads items)
        return self.where("")

    def items(self) -> Any:
        return [(t["id"], t) for t in self.where("")]

    def batches(self, condition: str, params: Sequence[Any] = (), order: str = "seq",
                size: int = 2000) -> Iterator[list[Record]]:
        """The tasks whose row meets `condition` (SQL), in `order`, `size` at a time (a
        batch's bodies held at once: peak memory)."""
        cursor = self.conn.execute(f"SELECT id, off, len, body FROM task {condition} "
                                   f"ORDER BY {order}", params)
        while rows := cursor.fetchmany(size):
            yield self.records(rows)

    def where(self, condition: str, params: Sequence[Any] = ()) -> list[Record]:
        """`batches`' tasks in one list, in the fold's order."""
        return [t for batch in self.batches(condition, params) for t in batch]


def _in(statuses: Collection[str] | None, *tests: str) -> tuple[str, list[Any]]:
    """A WHERE clause ("" for none) keeping the rows whose status is one of `statuses`
    (None: any) that pass each of `tests` (SQL), and its parameters (the statuses)."""
    wanted = [] if statuses is None else list(dict.fromkeys(statuses))
    parts = [] if statuses is None else [f"status IN ({', '.join('?' * len(wanted))})"]
    parts += tests
    return ("WHERE " + " AND ".join(parts)) if parts else "", wanted


_RANK = "CASE priority WHEN 'high' THEN 0 WHEN 'low' THEN 2 ELSE 1 END"  # priority_rank
# tasks.sort_key as SQL: newest first; equal stamps, later in the fold first; and as
# keys sorted ascending (StoreFold.listed).
_ORDER = {"created": "created DESC, seq DESC", "updated": "updated DESC, seq DESC",
          "priority": f"{_RANK}, created DESC, seq DESC"}
_KEYS = {"created": "-created, -seq", "updated": "-updated, -seq",
         "priority": f"{_RANK}, -created, -seq"}


def _priority_in(priorities: Collection[str]) -> str:
    """A test keeping the rows whose priority, as model.priority_key reads it (missing
    or null: medium), is one of `priorities`."""
    ors = [f"priority = '{p}'" for p in ("high", "medium", "low") if p in priorities]
    if "medium" in priorities:
        ors.append("priority IS NULL")
    if "other" in priorities:
        ors.append("priority NOT IN ('high', 'medium', 'low')")
    return f"({' OR '.join(ors) or '0'})"


# The tasks whose type (details.value_of of their last `task_type` row in the fold's
# order: its text, `task` when that is none or empty) is one of ?, a JSON list — or,
# with NOT IN, of the others: a task with no such row is a `task` (the typed_type index).
_TYPED_AS = """SELECT y.task FROM typed y INDEXED BY typed_type WHERE y.kind = 'task_type'
  AND y.task IS NOT NULL AND NOT EXISTS (SELECT 1 FROM typed z INDEXED BY typed_type
    WHERE z.kind = 'task_type' AND z.task = y.task AND z.seq > y.seq)
  AND coalesce(nullif(y.task_type, ''), 'task') {op} (SELECT value FROM json_each(?))"""


def _type_test(types: Collection[str]) -> tuple[str, str]:
    """(parameter, test) keeping the rows of tasks whose type is one of `types`."""
    wanted = orjson.dumps(sorted(set(types))).decode()
    if "task" in types:  # every task but those typed otherwise
        return wanted, f"id NOT IN ({_TYPED_AS.format(op='NOT IN')})"
    return wanted, f"id IN ({_TYPED_AS.format(op='IN')})"


def _narrowing(q: Query, statuses: Collection[str] | None) -> tuple[str, list[Any]]:
    """A WHERE clause keeping the rows of `statuses` (None: any) that match the filters of
    `q` that are columns (the type: of its typed row), exactly as tasks.find reads them,
    and its parameters."""
    tests = [_priority_in(q.priorities)] if q.priorities else []
    more = [(value, test) for value, test in ((q.created_from, "created >= ?"),
            (q.created_before, "created < ?"), (q.session, "session = ?")) if value is not None]
    if q.types:
        more.append(_type_test(q.types))
    if q.tags:  # tag rows carry status and priority: the index narrows by all three,
        # and the tasks are then looked up by seq (their rowid), not by status again
        tagged, params = _in(statuses, *tests, f"tag IN ({', '.join('?' * len(q.tags))})")
        where = _in(None, f"seq IN (SELECT seq FROM tag {tagged})", *(t for _v, t in more))[0]
        params += q.tags
    else:
        where, params = _in(statuses, *tests, *(t for _v, t in more))
    return where, [*params, *(value for value, _t in more)]


_OPEN = "('pending', 'in_progress')"
# A `parent` row p that is its task's last one naming a parent (what makes it a child).
_LAST_PARENT = """p.parent != '' AND p.task != p.parent
  AND NOT EXISTS (SELECT 1 FROM typed q WHERE q.task = p.task AND +q.kind = 'parent'
    AND q.parent != '' AND q.parent != q.task AND q.seq > p.seq)"""
# Questions.ready as a query: the pending tasks in the task_rank index's order, each
# kept when no dependency of it (typed_task) nor child of it (typed_parent, the child's
# last parent record) is an open task; SQLite stops walking at the limit.
_READY = f"""SELECT id, priority, created FROM task t WHERE status = 'pending' {{where}}
AND NOT EXISTS (SELECT 1 FROM typed d JOIN task b ON b.id = d.blocked_by
  WHERE d.task = t.id AND +d.kind = 'dep' AND NOT d.removed AND d.blocked_by != d.task
  AND b.status IN {_OPEN})
AND NOT EXISTS (SELECT 1 FROM typed p JOIN task c ON c.id = p.task
  WHERE p.parent = t.id AND c.status IN {_OPEN} AND +p.kind = 'parent' AND {_LAST_PARENT})
ORDER BY {_RANK}, created, seq LIMIT ?"""
# Questions.blocked as a query: each open task's links to open ones (dependencies by fold
# key, then children by their first parent row; typed_kind), ranked as queue.blocked does.
_BLOCKED = f"""WITH waits(task, other, kind, k1, k2) AS (
SELECT d.task, d.blocked_by, 0, d.ts, d.line FROM typed d JOIN task b ON b.id = d.blocked_by
  WHERE d.kind = 'dep' AND NOT d.removed AND d.blocked_by != d.task AND b.status IN {_OPEN}
UNION ALL
SELECT p.parent, p.task, 1, (SELECT min(f.seq) FROM typed f WHERE f.task = p.task
  AND +f.kind = 'parent' AND f.parent != '' AND f.parent != f.task), 0
  FROM typed p JOIN task c ON c.id = p.task WHERE p.kind = 'parent' AND {_LAST_PARENT}
  AND c.status IN {_OPEN})
SELECT id, priority, created, status, other FROM waits JOIN task t ON t.id = waits.task
WHERE status IN {_OPEN} ORDER BY {_RANK}, created, status != 'pending', seq, kind, k1, k2"""
# The typed records about some tasks (?1: their ids, JSON), and about those linking to them.
_ABOUT = "task IN (SELECT value FROM json_each(?1))"
# ?2 (JSON): `skip`'s kinds; a NULL kind (a type that is no text) is kept, never read by ?3
_KEPT = "(kind IS NULL OR kind NOT IN (SELECT value FROM json_each(?2)))"
_LINKED = (" OR task IN (SELECT task FROM typed WHERE blocked_by IN (SELECT value FROM "
           "json_each(?1)) UNION SELECT task FROM typed WHERE parent IN (SELECT value FROM "
           "json_each(?1)))")
_ENCODED = ("CASE WHEN shown IS NULL THEN body ELSE shown END, "  # find_encoded's (a comma
            "CASE status WHEN 'pending' THEN NULL ELSE id END")  # apart: listed's sort keys)
# shared_prefixes: the hex parts just below and above one (task_hex), itself left out;
# for more ids than SHARED_BULK, every id in the index's order costs less.
SHARED_BULK = 2000
_NEAR = ("SELECT * FROM (SELECT hex FROM task WHERE hex >= ?1 AND hex < ?2 AND id != ?4 ORDER BY "
         "hex DESC LIMIT 1) UNION ALL SELECT * FROM (SELECT hex FROM task WHERE hex >= ?2 AND "
         "hex < ?3 AND id != ?4 ORDER BY hex LIMIT 1)")


class StoreFold(Fold):
    """A fold answered by the store: each of the questions (aidp.tasklist.questions) is a
    query. It has no `typed`, `typed_keys` or `task_keys` mappings: its typed records
    and fold keys are asked for through the questions (`typed_records`, `typed_record`,
    `task_keys_now`), and read only when asked."""

    _fields: tuple[str, ...] = ("tasks", "damaged", "lines", "ends_with_newline")  # (repr, ==)

    def __init__(self, conn: sqlite3.Connection, log: LogFile,
                 release: Callable[[], None] | None = None, **fields: Any) -> None:
        handle = Handle(conn, release)
        self.rows = StoreTasks(handle, log)  # fold.tasks, typed as what it is
        super().__init__(tasks=self.rows, **fields)  # type: ignore[arg-type]
        del self.typed, self.typed_keys, self.task_keys  # asked through the questions
        self._handle, self._log = handle, log
        # Every typed record, once read whole (the queue's state of every task, a TODO
        # list: read again within one command, never after the fold is dropped).
        self._everything: list[tuple[str, FoldKey, Record]] | None = None

    db = property(lambda self: self._handle.conn)  # (to_memory may give it another)

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return self.db.execute(sql, params).fetchall()  # type: ignore[no-any-return]

    def _typed(self, where: str = "", params: Sequence[Any] = (),
               tasks: Collection[str] | None = None) -> list[tuple[str, FoldKey, Record]]:
        """(id, fold key, record) of the typed rows meeting `where` (about `tasks`), in order."""
        rows = self._rows(f"SELECT id, ts, line, body, task FROM typed {where} ORDER BY seq",
                          params)
        if tasks is not None:
            rows = [row for row in rows if row[4] in tasks]
        records = self._log.decode_all([(row[0], row[3]) for row in rows])
        return [(rid, (ts, line), record)
                for (rid, ts, line, _body, _task), record in zip(rows, records, strict=True)]

    def _tally(self, key: str, table: str, statuses: Collection[str] | None) -> dict[Any, int]:
        where, params = _in(statuses)
        return dict(self._rows(f"SELECT {key}, sum(n) FROM {table} {where} GROUP BY {key} "
                               "HAVING sum(n) > 0", params))

    def select(self, statuses: Collection[str]) -> list[Record]:
        return self.rows.where(*_in(statuses))

    def tasks_of(self, ids: Sequence[str]) -> list[Record]:  # one query for them all
        found = {t["id"]: t for t in self.rows.where(
            "WHERE id IN (SELECT value FROM json_each(?))", (orjson.dumps(list(ids)).decode(),))}
        return [found[tid] for tid in ids]

    def status_counts(self) -> dict[str | None, int]:
        return self._tally("status", "tally", None)

    def summaries(self, statuses: Collection[str]) -> list[tuple[str, str | None, int]]:
        where, params = _in(statuses)
        return self._rows(f"SELECT id, priority, created FROM task {where} ORDER BY seq",
                          params)

    def tag_counts(self, statuses: Collection[str] | None = None) -> dict[str, int]:
        return self._tally("tag", "tag_tally", statuses)

    def priority_counts(self, statuses: Collection[str]) -> dict[str | None, int]:
        return self._tally("priority", "tally", statuses)

    def oldest(self, statuses: Collection[str]) -> str | None:
        # One index seek per status (task_created): an IN over several would sort them all.
        firsts = [row for status in dict.fromkeys(statuses) for row in self._rows(
            "SELECT created, seq, id FROM task WHERE status = ? ORDER BY created, seq "
            "LIMIT 1", (status,))]
        return min(firsts)[2] if firsts else None

    def week_counts(self, kind: str, statuses: Collection[str] | None = None,
                    since: int = UNKNOWN_TS) -> dict[int, int]:
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}")
        since = week_start(since) if since != UNKNOWN_TS else UNKNOWN_TS + 1
        # model.week_start in SQL: its % keeps the dividend's sign, Python's floors.
        day = f"({kind} - ({kind} % {DAY} + {DAY}) % {DAY})"
        week = f"{day} - (({day} / {DAY} + 3) % 7 + 7) % 7 * {DAY}"
        where, params = _in(statuses, f"{kind} >= ?")
        return dict(self._rows(f"SELECT {week}, count(*) FROM task {where} GROUP BY 1",
                               [*params, since]))

    def created_at_most(self, statuses: Collection[str], bounds: list[int]
                        ) -> tuple[int, list[int]]:
        # Per status, task_age counted between consecutive bounds (each entry walked once;
        # task_created, SQLite's pick, walks open bodies: 4 -> 16 ms at 1M); total: tally.
        at = dict.fromkeys(bounds, 0)
        for status in dict.fromkeys(statuses):
            running, low = 0, UNKNOWN_TS - 1  # below every stamp
            for bound in sorted(at):
                running += self._rows("SELECT count(*) FROM task INDEXED BY task_age WHERE "
                                      "status = ? AND created > ? AND created <= ?",
                                      (status, low, bound))[0][0]
                at[bound] += running
                low = bound
        return sum(self._tally("status", "tally", statuses).values()), [at[b] for b in bounds]

    def ids_with_prefix(self, prefix: str, *, last_part: bool) -> list[str]:
        key = "hex" if last_part else "id"  # (its index: task_hex, task_id)
        sql = f"SELECT id FROM task WHERE {key} >= ? AND {key} < ? ORDER BY id"
        return [row[0] for row in self._rows(sql, (prefix, prefix + "\U0010ffff"))]

    def shared_prefixes(self, hexes: Mapping[str, str], at_least: int) -> dict[str, int]:
        if len(hexes) > SHARED_BULK:  # every id in the task_hex index's order, once
            near = self._rows("SELECT hex, id FROM task ORDER BY hex")
            near.sort()  # equal hex parts by id (in order already: no sort in SQLite)
            return shared_in_sorted(near, hexes, at_least)
        return {tid: max((common_length(mine, h.lower()) for (h,) in self._rows(_NEAR, (
            mine[:at_least], mine, mine[:at_least] + "\U0010ffff", tid))), default=0)
            for tid, mine in hexes.items()}  # the hex parts just below and above it

    def newest_first(self, batch: int = 2000) -> Iterator[list[Record]]:
        return self.rows.batches("", order=_ORDER["created"], size=batch)  # none kept

    def typed_records(self, about: str | Collection[str] | None = None, *,
                      own: bool = False, skip: Collection[str] = (),
                      kinds: Collection[str] | None = None
                      ) -> Iterable[tuple[str, FoldKey, Record]]:
        wanted = [about] if isinstance(about, str) else None if about is None else list(about)
        many = wanted is not None and len(wanted) > 64 and len(wanted) > self._rows(
            "SELECT count(*) FROM typed")[0][0]  # more ids than records: read them all
        params = [orjson.dumps(sorted(skip)).decode()]  # ?2: the kinds left unread
        only = "" if kinds is None else " AND kind IN (SELECT value FROM json_each(?3))"
        params += [] if kinds is None else [orjson.dumps(sorted(kinds)).decode()]  # ?3
        if wanted is not None and not many:
            return self._typed(f"WHERE ({_ABOUT}{'' if own else _LINKED}) AND {_KEPT}{only}",
                               (orjson.dumps(wanted).decode(), *params))
        if wanted is not None and own:  # (a listing's) kept by their task, then decoded
            return self._typed(f"WHERE {_KEPT}{only}", (None, *params), tasks=set(wanted))
        if skip or kinds is not None:  # (every task's links but their bodies, a TODO list)
            found = self._typed(f"WHERE {_KEPT}{only}", (None, *params))
        else:
            found = self._everything = self._everything or self._typed()
        return about_only(found, about, own=own)

    def typed_record(self, rid: str) -> Record | None:
        found = self._typed("WHERE id = ?", (rid,)) if type(rid) is str else []
        return found[0][2] if found else None

    def task_keys_now(self) -> dict[str, FoldKey]:
        return {rid: (ts, line) for rid, ts, line in self.db.execute(
            "SELECT id, ts, line FROM task ORDER BY seq")}

    def claims(self, statuses: Collection[str]) -> list[tuple[str, str | None, int,
                                                             list[Record]]]:
        if not self._rows("SELECT 1 FROM typed WHERE kind = 'claim' LIMIT 1"):
            return []  # no claim at all (typed_kind): no task walked (a hook's renewal)
        where, params = _in(statuses)  # (status: the task's; typed has no such column)
        rows = self._rows("SELECT t.id, t.priority, t.created, c.id, c.body FROM task t "
                          "JOIN typed c ON c.task = t.id AND +c.kind = 'claim' "
                          f"{where} ORDER BY t.seq, c.seq", params)
        records = self._log.decode_all([(row[3], row[4]) for row in rows])
        found: list[tuple[str, str | None, int, list[Record]]] = []
        for (tid, priority, created, _cid, _body), record in zip(rows, records, strict=True):
            if not found or found[-1][0] != tid:
                found.append((tid, priority, created, []))
            found[-1][3].append(record)
        return found

    def ready(self, limit: int | None = None, *, priorities: Collection[str] = (),
              exclude: Collection[str] = ()) -> list[tuple[str, str | None, int]]:
        where = f"AND {_priority_in(priorities)}" if priorities else ""
        skip = orjson.dumps(list(exclude)).decode() if exclude else None
        if skip is not None:
            where += " AND id NOT IN (SELECT value FROM json_each(?))"
        params = ([] if skip is None else [skip]) + [-1 if limit is None else limit]
        return self._rows(_READY.format(where=where), params)

    def blocked(self) -> list[tuple[str, str | None, int, str, list[str]]]:
        found: list[tuple[str, str | None, int, str, list[str]]] = []
        for tid, priority, created, status, other in self._rows(_BLOCKED):
            if found and found[-1][0] == tid:
                found[-1][4].append(other)
            else:
                found.append((tid, priority, created, status, [other]))
        return found

    def task_types(self) -> dict[str, str]:  # each task's last task_type row's, by seq
        return dict(self._rows("SELECT task, coalesce(nullif(task_type, ''), 'task') FROM typed "
                               "WHERE kind = 'task_type' AND task IS NOT NULL ORDER BY seq"))

    def narrowed(self, q: Query) -> Iterable[Record]:
        where, params = _narrowing(q, q.statuses)
        if q.assignee is not None:  # the tasks an active claim by that name is about
            name = q.assignee.casefold()
            held = [c["task"] for _rid, _key, c in self._typed("WHERE kind = 'claim'")
                    if type(c.get("assignee")) is str and c["assignee"].casefold() == name
                    and not c.get("released_at") and type(c.get("task")) is str]
            where += f" {'AND' if where else 'WHERE'} id IN (SELECT value FROM json_each(?))"
            params.append(orjson.dumps(held).decode())
        return self.rows.where(where, params)

    def listed(self, q: Query, columns: str) -> Iterator[list[Any]]:
        """`columns` (SQL) of the tasks that `q`'s column filters keep, in its order, at
        most its limit, 2,000 rows at a time (a batch's bodies held at once: peak memory).
        Each status is one range of the task_created index, walked in order (several
        statuses: one walk each, merged by SQLite); where no index gives the order,
        SQLite's sorter would copy each body (1,439 rows at 1M events: ~6 of ~15 ms),
        so the rows' sort keys (`_KEYS`, further columns) are sorted here instead."""
        limit = -1 if q.limit is None else q.limit
        statuses = None if q.statuses is None else list(dict.fromkeys(q.statuses))
        if statuses is not None and len(statuses) > 1 and q.sort == "created":
            parts = [_narrowing(q, (status,)) for status in statuses]
            sql = " UNION ALL ".join(f"SELECT {columns}, created, seq FROM task {where}"
                                     for where, _params in parts)
            cursor = self.db.execute(f"{sql} ORDER BY created DESC, seq DESC LIMIT {limit}",
                                     [p for _where, params in parts for p in params])
            return iter(partial(cursor.fetchmany, 2000), [])
        where, params = _narrowing(q, statuses)
        sql = f"SELECT {columns} FROM task {where} ORDER BY {_ORDER[q.sort]} LIMIT {limit}"
        if not any("TEMP B-TREE" in row[-1] for row in self._rows(f"EXPLAIN QUERY PLAN {sql}",
                                                                  params)):
            return iter(partial(self.db.execute(sql, params).fetchmany, 2000), [])
        rows = self._rows(f"SELECT {columns}, {_KEYS[q.sort]} FROM task {where}", params)
        rows.sort(key=itemgetter(slice(columns.count(",") + 1, None)), reverse=True)
        del rows[:len(rows) - limit if 0 <= limit < len(rows) else 0]  # the first ones last

        def next_batch() -> list[Any]:  # dropping the rows it hands out
            batch = rows[-2000:]
            del rows[-2000:]
            return batch[::-1]
        return iter(next_batch, [])

    def find(self, q: Query) -> tuple[list[Record], dict[str, int]] | None:
        if q.grep is not None or q.assignee is not None:
            return None
        found: list[Record] = []
        counts: dict[str, int] = {}
        for batch in self.listed(q, "id, off, len, body, status"):
            if q.limit is None:  # every matching row is read: counted on the way
                for status, n in Counter(map(itemgetter(4), batch)).items():
                    counts[str(status)] = counts.get(str(status), 0) + n
            found += self.rows.records(batch)
        if q.limit is not None:
            where, params = _narrowing(q, q.statuses)
            counts = {str(s): n for s, n in self._rows(
                f"SELECT status, count(*) FROM task {where} GROUP BY status", params)}
        return found, counts

    def find_encoded(self, q: Query) -> list[tuple[bytes, str | None]] | None:
        if (q.grep is not None or q.assignee is not None or q.statuses is None
                or not set(q.statuses) <= set(OPEN_STATUSES)):
            return None
        return [(row[0], row[1]) for batch in self.listed(q, _ENCODED) for row in batch]
