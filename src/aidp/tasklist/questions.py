"""The questions the domain asks of the state now: one interface, two implementations.

`Questions` is what `tasks`, `queue`, `insights`, `prime`, the report and the CLI ask of
a fold, instead of looping over `fold.tasks` or probing it for attributes. Its methods
here are the reference answers: a loop over `self.tasks`, in the fold's order (the line
each id first came on). `aidp.tasklist.fold.Fold` (the plain fold: small logs, several worktrees,
any doubt about the cache) inherits them as they are; `aidp.store.questions.StoreFold`
(the fold `aidp.store` loads) overrides every one with a query on the store's tables
that reads an index and decodes only the tasks it returns. The two live side by side:
a question changes in both, and tests/test_index.py holds them equal on random logs,
after appends, rewrites, damage, repair and compact. This module is pure: no I/O,
nothing printed.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from aidp.core.model import (
    UNKNOWN_TS,
    Record,
    finished_at,
    priority_key,
    priority_rank,
    task_tags,
    ts_of,
    week_start,
)

FoldKey = tuple[int, int]  # (updated_at µs, line): the fold's order (aidp.tasklist.fold.FoldKey)

KINDS = ("created", "finished")  # week_counts' series
# A task's type record and the type of a task without one (docs/file-format.md, "Body,
# type and close reason"; aidp.backlog.details).
TASK_TYPE, TASK_TYPE_DEFAULT = "task_type", "task"


class Query(Protocol):
    """What `find`/`narrowed` read of a `tasks list` query (aidp.backlog.tasks.Query)."""

    @property
    def statuses(self) -> Collection[str] | None: ...
    @property
    def priorities(self) -> Collection[str]: ...
    @property
    def tags(self) -> Collection[str]: ...
    @property
    def session(self) -> str | None: ...
    @property
    def created_from(self) -> int | None: ...
    @property
    def created_before(self) -> int | None: ...
    @property
    def sort(self) -> str: ...
    @property
    def limit(self) -> int | None: ...
    @property
    def grep(self) -> str | None: ...
    @property
    def assignee(self) -> str | None: ...
    @property
    def types(self) -> Collection[str]: ...


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def common_length(a: str, b: str) -> int:
    """How many leading characters `a` and `b` share."""
    n = 0
    for x, y in zip(a, b):  # noqa: B905 - the shorter one ends the common part
        if x != y:
            break
        n += 1
    return n


def shared_in_sorted(near: Sequence[tuple[str, str]], hexes: Mapping[str, str],
                     at_least: int) -> dict[str, int]:
    """Questions.shared_prefixes, given (hex part, id) of the tasks in sorted order
    (at least those sharing a first part with one of `hexes`)."""
    keys = [key for key, _tid in near]
    ids = [tid for _key, tid in near]
    found: dict[str, int] = {}
    last = len(near) - 1
    for tid, mine in hexes.items():  # (a plain loop: 40k ids for a table at 100k)
        first = mine[:at_least]
        at = bisect_left(keys, mine)
        below = at - 1 if at < 1 or ids[at - 1] != tid else at - 2
        above = at if at > last or ids[at] != tid else at + 1
        most = 0
        if below >= 0 and keys[below].startswith(first):
            most = common_length(mine, keys[below].lower())
        if above <= last and keys[above].startswith(first):
            most = max(most, common_length(mine, keys[above].lower()))
        found[tid] = most
    return found


def _count(keys: Iterable[Any]) -> dict[Any, int]:
    counts: dict[Any, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    return counts


def about_only(records: Iterable[tuple[str, FoldKey, Record]],
               about: str | Collection[str] | None, *, own: bool = False,
               skip: Collection[str] = (), kinds: Collection[str] | None = None
               ) -> list[tuple[str, FoldKey, Record]]:
    """`records` (id, fold key, record) as `Questions.typed_records` keeps them for
    `about`, `own`, `skip` and `kinds`."""
    kept = [(rid, key, record) for rid, key, record in records
            if (not skip or record.get("type") not in skip)
            and (kinds is None or record.get("type") in kinds)]
    if about is None:
        return kept
    wanted = {about} if isinstance(about, str) else set(about)
    linked = set() if own else {
        task for _rid, _key, record in kept
        if (_text(record.get("blocked_by")) in wanted or _text(record.get("parent")) in wanted)
        and isinstance(task := record.get("task"), str)}
    linked |= wanted
    return [(rid, key, record) for rid, key, record in kept
            if isinstance(task := record.get("task"), str) and task in linked]


class Questions:
    """The questions, answered by a loop over `tasks` (see the module's docstring)."""

    tasks: Mapping[str, Record]
    typed: Mapping[str, Record]
    typed_keys: Mapping[str, FoldKey]
    task_keys: Mapping[str, FoldKey]

    def _of(self, statuses: Collection[str] | None) -> Iterator[Record]:
        wanted = None if statuses is None else set(statuses)
        return (t for t in self.tasks.values()
                if wanted is None or _text(t.get("status")) in wanted)

    def select(self, statuses: Collection[str]) -> list[Record]:
        """The tasks whose status is one of `statuses`, in the fold's order."""
        return list(self._of(statuses))

    def tasks_of(self, ids: Sequence[str]) -> list[Record]:
        """The task of each of `ids` (KeyError for one that is no task), in their order:
        what `tasks ready` and `blocked` show."""
        return [self.tasks[tid] for tid in ids]

    def status_counts(self) -> dict[str | None, int]:
        """How many tasks have each status (None: missing or not a string)."""
        return _count(_text(t.get("status")) for t in self.tasks.values())

    def summaries(self, statuses: Collection[str]) -> list[tuple[str, str | None, int]]:
        """(id, priority, created_at µs) of the tasks whose status is one of `statuses`,
        in the fold's order; priority is None when missing or not a string."""
        return [(t["id"], _text(t.get("priority")), ts_of(t, "created_at"))
                for t in self._of(statuses)]

    def tag_counts(self, statuses: Collection[str] | None = None) -> dict[str, int]:
        """How many tasks carry each tag (`model.task_tags`), among those whose status is
        one of `statuses` (None: every task); tags no task carries are left out."""
        return _count(tag for t in self._of(statuses) for tag in task_tags(t))

    def priority_counts(self, statuses: Collection[str]) -> dict[str | None, int]:
        """How many tasks whose status is one of `statuses` have each priority (None:
        missing or not a string)."""
        return _count(_text(t.get("priority")) for t in self._of(statuses))

    def oldest(self, statuses: Collection[str]) -> str | None:
        """The id of the task with the smallest created_at µs (unreadable ones are the
        smallest) among those whose status is one of `statuses`, the first in the
        fold's order among equals; None when there is none."""
        first = min(self.summaries(statuses), key=lambda s: s[2], default=None)
        return None if first is None else first[0]

    def week_counts(self, kind: str, statuses: Collection[str] | None = None,
                    since: int = UNKNOWN_TS) -> dict[int, int]:
        """How many tasks (whose status is one of `statuses`; None: every task) were
        created (kind "created": `created_at`) or finished (kind "finished":
        `model.finished_at`) in each ISO week from the one holding `since` on, keyed by
        the week's Monday 00:00 UTC in µs; unreadable stamps and empty weeks left out."""
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}")
        since = week_start(since) if since != UNKNOWN_TS else UNKNOWN_TS + 1
        stamps = (ts_of(t, "created_at") if kind == "created" else finished_at(t)
                  for t in self._of(statuses))
        return _count(week_start(s) for s in stamps if s is not None and s >= since)

    def created_at_most(self, statuses: Collection[str], bounds: list[int]
                        ) -> tuple[int, list[int]]:
        """How many tasks have one of `statuses`, and how many of them were created at
        or before each of `bounds` (µs; an unreadable created_at counts as UNKNOWN_TS)."""
        created = sorted(ts_of(t, "created_at") for t in self._of(statuses))
        return len(created), [bisect_right(created, bound) for bound in bounds]

    def ids_with_prefix(self, prefix: str, *, last_part: bool) -> list[str]:
        """The ids (sorted) that start with `prefix`, or whose last `_` part does."""
        if last_part:
            return sorted(t for t in self.tasks if t.rpartition("_")[2].startswith(prefix))
        return sorted(t for t in self.tasks if t.startswith(prefix))

    def shared_prefixes(self, hexes: Mapping[str, str], at_least: int) -> dict[str, int]:
        """For each id of `hexes` (id → its hex part, lowercased), the most leading
        characters its hex part shares with another task's (lowercased), among the
        tasks whose hex part starts with its first `at_least` characters (0: none
        does). The most is with a neighbour in sorted order, just below or just above
        it, so only those two are compared (backlog.ids.short_ids: 25k ids sharing a
        long prefix made every short id compare with all of them). Here one pass over
        the ids, then a sort of those sharing a first part."""
        firsts = {mine[:at_least] for mine in hexes.values()}
        return shared_in_sorted(sorted(
            (key, tid) for tid in self.tasks
            if (key := tid.rpartition("_")[2])[:at_least] in firsts), hexes, at_least)

    def newest_first(self, batch: int = 2000) -> Iterator[list[Record]]:
        """Every task in `tasks list`'s default order (newest created first; equal
        stamps: later in the fold first), a batch at a time."""
        ordered = list(self.tasks.values())
        ordered.reverse()
        ordered.sort(key=lambda t: -ts_of(t, "created_at"))
        for at in range(0, len(ordered), batch):
            yield ordered[at:at + batch]

    def typed_records(self, about: str | Collection[str] | None = None, *,
                      own: bool = False, skip: Collection[str] = (),
                      kinds: Collection[str] | None = None
                      ) -> Iterable[tuple[str, FoldKey, Record]]:
        """(id, fold key, record) of the typed records, in the fold's order; with
        `about` (a task id, or several), only those whose task is one of them or a task
        that may link to one: naming it as `blocked_by` or `parent` in any of its
        records (all of such a task's records, since its last parent record decides
        whether it is a child). What the work queue's state of some tasks reads
        (`tasks show`, `claim`). With `own`, only those whose task is one of them (what
        the links `list --json` adds to the tasks it found read). Records whose `type`
        is one of `skip` are left out (a listing reads no task's body); with `kinds`,
        only records of those types (a TODO list's)."""
        keys = self.typed_keys
        return about_only([(rid, keys[rid], record) for rid, record in self.typed.items()],
                          about, own=own, skip=skip, kinds=kinds)

    def typed_record(self, rid: str) -> Record | None:
        """The typed record `rid` (its winner), None when there is none."""
        return self.typed.get(rid)

    def task_keys_now(self) -> dict[str, FoldKey]:
        """Each task's winning fold key (updated_at µs, line), in the fold's order: what
        changes with every task write, read without decoding a task."""
        return dict(self.task_keys)

    def claims(self, statuses: Collection[str]) -> list[tuple[str, str | None, int,
                                                             list[Record]]]:
        """(id, priority, created_at µs, its claim records) of each task whose status is
        one of `statuses` and that some `claim` record (a typed record of that type whose
        `task` is the task's id) is about, in the fold's order; its claim records in the
        fold's order too, released ones included. What the leases judge
        (aidp.backlog.queue.leases: who holds an in-progress task, and until when)."""
        by_task: dict[str, list[Record]] = {}
        for record in self.typed.values():
            if record.get("type") == "claim" and type(task := record.get("task")) is str:
                by_task.setdefault(task, []).append(record)
        if not by_task:
            return []
        return [(tid, priority, created, by_task[tid])
                for tid, priority, created in self.summaries(statuses) if tid in by_task]

    def _waits(self) -> dict[str, list[str]]:
        """task -> what it waits on, as queue.QueueState.waits gives it: its dependencies
        (`dep` records not `removed`, by their fold key), then its children (the tasks
        whose last `parent` record names it, in the order of their first one)."""
        def text(record: Record, key: str) -> str | None:
            value = record.get(key)
            return value if isinstance(value, str) and value else None

        edges: list[tuple[FoldKey, str, str]] = []
        parents: dict[str, str] = {}
        keys = self.typed_keys
        for rid, record in self.typed.items():
            kind, task = record.get("type"), text(record, "task")
            if kind == "dep" and task is not None and record.get("removed") is not True:
                blocker = text(record, "blocked_by")
                if blocker is not None and blocker != task:
                    edges.append((keys[rid], task, blocker))
            elif kind == "parent" and task is not None:
                parent = text(record, "parent")
                if parent is not None and parent != task:
                    parents[task] = parent
        waits: dict[str, list[str]] = {}
        for _key, task, blocker in sorted(edges, key=lambda edge: edge[0]):
            waits.setdefault(task, []).append(blocker)
        for child, parent in parents.items():
            waits.setdefault(parent, []).append(child)
        return waits

    def ready(self, limit: int | None = None, *, priorities: Collection[str] = (),
              exclude: Collection[str] = ()) -> list[tuple[str, str | None, int]]:
        """(id, priority, created_at µs) of the ready tasks (aidp.backlog.queue;
        docs/guide.md "Work queue"): pending, not in `exclude`, waiting on no open (pending or
        in progress) task — through a dependency (a `dep` record not `removed`) or, an epic,
        through a child (the task of its last `parent` record naming one). Best first:
        priority_rank, created, the fold's order; at most `limit`; with `priorities`, of those
        (model.priority_key)."""
        waits = self._waits()
        open_ids = {t for t, _p, _c in self.summaries(("pending", "in_progress"))}
        skip, wanted = set(exclude), set(priorities)
        rows = [row for row in self.summaries(("pending",)) if row[0] not in skip
                and (not wanted or priority_key(row[1]) in wanted)
                and not any(w in open_ids for w in waits.get(row[0], ()))]
        rows.sort(key=lambda row: (priority_rank(row[1]), row[2]))
        return rows if limit is None else rows[:limit]

    def blocked(self) -> list[tuple[str, str | None, int, str, list[str]]]:
        """(id, priority, created_at µs, status, what it waits on that is open) of the
        open tasks waiting on an open task (`ready`'s links: dependencies, then
        children), best first: priority_rank, created, pending before in progress, the
        fold's order."""
        waits = self._waits()
        rows = [(*row, status) for status in ("pending", "in_progress")
                for row in self.summaries((status,))]
        open_ids = {row[0] for row in rows}
        found = [(tid, priority, created, status, waiting)
                 for tid, priority, created, status in rows
                 if (waiting := [w for w in waits.get(tid, ()) if w in open_ids])]
        found.sort(key=lambda row: (priority_rank(row[1]), row[2]))
        return found

    def narrowed(self, q: Query) -> Iterable[Record]:
        """The tasks that may match `q`, in the fold's order: at least those its filters
        that are columns (status, priority, tags, session, created) keep, and with
        `assignee` those an active claim by that name (casefolded) is about; exactly
        those of its `types` — what tasks.find then filters (here: those of its
        statuses and types)."""
        found = self.tasks.values() if q.statuses is None else self.select(q.statuses)
        if not q.types:
            return found
        types, wanted = self.task_types(), set(q.types)
        return [t for t in found if types.get(t["id"], TASK_TYPE_DEFAULT) in wanted]

    def task_types(self) -> dict[str, str]:
        """task -> its type, for the tasks with a `task_type` record: the value of the
        last of them in the fold's order (aidp.backlog.details.value_of: the text, or
        `task` when it is empty or no text). The store keeps it in the typed row."""
        found: dict[str, str] = {}
        for record in self.typed.values():
            if record.get("type") == TASK_TYPE and type(task := record.get("task")) is str:
                value = record.get(TASK_TYPE)
                found[task] = value if isinstance(value, str) and value else TASK_TYPE_DEFAULT
        return found

    def find(self, q: Query) -> tuple[list[Record], dict[str, int]] | None:
        """tasks.find of the tasks with `q` — the tasks found (sorted, at most q.limit)
        and how many of each status matched — when answered here without decoding the
        rest; None: tasks.find over `narrowed(q)` answers (here: always; the store:
        when --grep or --assignee is set)."""
        return None

    def find_encoded(self, q: Query) -> list[tuple[bytes, str | None]] | None:
        """(the task as an element of `tasks list --json`'s array: model.json_elements,
        None where that element is as shown already, with its queue keys, else its id)
        of each task `find` returns, when the fold keeps its tasks so (the store: its
        open tasks, with neither --grep nor --assignee, a pending one's with its links);
        None: `find` answers."""
        return None
