"""Listing tasks: which tasks a query finds, read the cheapest way for the shape the
caller shows them in (the read plan), with what that shape shows beside them.

The plan: every task in the list's order (`--all` as json, jsonl or ids) is streamed a
batch at a time from the store, in bounded memory; the store's open tasks as json are
its stored bytes (a pending task's with its links), decoded only where an in-progress
task has links; anything else is one query
(`tasks.find_in`) and the found tasks' own queue records (their links, claims, notes).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import orjson

from aidp.app.project import Project
from aidp.backlog import queue, tasks
from aidp.backlog.ids import short_ids
from aidp.backlog.tasks import Query
from aidp.core.errors import InvalidInput
from aidp.core.model import OPEN_STATUSES, STATUSES, Record, json_elements
from aidp.core.plain import Plain
from aidp.tasklist.fold import Fold

STATUS_WORDS = (*STATUSES, "open", "all")
# The shapes a listing is read for: what the caller shows.
SHAPES = ("table", "tree", "json", "jsonl", "ids", "markdown", "csv")
STREAMED = ("json", "jsonl", "ids")  # shown a batch at a time
LINKED = ("json", "jsonl", "table", "tree")  # shown with the tasks' queue records


def statuses_of(words: Sequence[str], *, include_all: bool = False
                ) -> tuple[str, ...] | None:
    """The statuses asked for by name (a status, `open`, `all`); the open ones when
    none is named; None for all of them, a newer version's included."""
    if include_all:
        return None
    chosen: list[str] = []
    for word in words:
        normal = word.strip().lower().replace("-", "_")
        if normal == "all":
            return None
        if normal == "open":
            chosen.extend(OPEN_STATUSES)
        elif normal in STATUSES:
            chosen.append(normal)
        else:
            raise InvalidInput(f"Invalid status {word!r}: use one of {', '.join(STATUS_WORDS)}")
    return tuple(dict.fromkeys(chosen)) or OPEN_STATUSES


class Listing(Plain):
    """What a listing found, for its shape:

    batches    streamed shapes: the tasks a batch at a time, as shown (records, or json's
               ready array elements); None when `tasks` holds them
    tasks      the tasks found, at most the query's limit (json, jsonl: as shown, with
               their queue keys)
    matched    how many of each status matched (the table's footer)
    notes      table: `@assignee`, `waits on N` per task id
    parents    tree: each found task's epic
    short_ids  table, tree: full id → the short id shown
    rows       table: how many of `tasks` it shows (the first ones)
    holders    found nothing for an assignee: who does hold tasks (sorted)
    in_all     found nothing: how many tasks of the statuses asked for there are, other
               filters aside
    """

    _fields = ("batches", "tasks", "matched", "notes", "parents", "short_ids", "rows",
               "holders", "in_all")

    def __init__(self, *, batches: Iterable[Sequence[Record] | Sequence[bytes]] | None = None,
                 tasks: list[Record] | None = None, matched: dict[str, int] | None = None,
                 notes: dict[str, str] | None = None, parents: dict[str, str] | None = None,
                 short_ids: dict[str, str] | None = None,
                 holders: list[str] | None = None) -> None:
        self.batches = batches
        self.tasks = [] if tasks is None else tasks
        self.matched = {} if matched is None else matched
        self.notes = notes
        self.parents = parents
        self.short_ids = short_ids
        self.rows = len(self.tasks)
        self.holders = holders
        self.in_all = 0


def list_tasks(project: Project, query: Query, *, shape: str = "json",
               rows: int | None = None, bodies: bool = False) -> Listing:
    """The tasks `query` finds, read for `shape` (SHAPES): what a page showing them in
    that shape needs. `rows`: how many a table shows (None: all), for their short ids;
    `bodies`: json and jsonl show each task's body too (a listing reads none by
    default)."""
    return answer(project.read(), query, shape=shape, rows=rows, bodies=bodies)


def answer(fold: Fold, query: Query, *, shape: str, rows: int | None = None,
           bodies: bool = False) -> Listing:
    """`list_tasks` on a fold already read."""
    if (shape in STREAMED and query.statuses is None and query.sort == "created"
            and query.by_status_only()):
        # Every task (--all), in list's order: the fold's question (the store's query
        # decodes a batch at a time, in bounded memory), shown as it comes.
        batches: Iterable[list[Record]] = _limited(fold.newest_first(), query.limit)
        if shape != "ids":
            batches = _linked(queue.state(fold, bodies=bodies), batches)
        return Listing(batches=batches)
    encoded = fold.find_encoded(query) if shape == "json" and not bodies else None
    if encoded is not None:  # the store's open tasks, as they print: not decoded
        return Listing(batches=[_encoded(fold, encoded)])
    result = tasks.find_in(fold, query)
    found = result.tasks
    listing = Listing(tasks=found, matched=result.matched)
    if not found:
        if query.assignee is not None:
            listing.holders = _holders(queue.state(fold))
        counts = fold.status_counts()
        listing.in_all = sum(counts.values()) if query.statuses is None else sum(
            counts.get(s, 0) for s in query.statuses)
    if shape not in LINKED:
        return listing
    qs = queue.state(fold, about=[t["id"] for t in found], own=True, bodies=bodies)
    listing.tasks = found = queue.shown(fold, found, qs)  # (a table: its type, close reason)
    if shape == "tree":
        listing.parents = {t["id"]: qs.parent[t["id"]] for t in found if t["id"] in qs.parent}
        listing.short_ids = short_ids(fold, [t["id"] for t in found])
    elif shape == "table":
        listing.notes = queue.list_notes(fold, qs, found)
        shown = found if rows is None else found[:rows]
        listing.rows = len(shown)
        listing.short_ids = short_ids(fold, [t["id"] for t in shown])
    return listing


def listed_shown(project: Project, query: Query) -> list[Record]:
    """The tasks `query` finds, as shown (their queue keys): MCP, the board."""
    fold = project.read()
    return queue.shown(fold, tasks.find_in(fold, query).tasks)


def _limited(batches: Iterable[list[Record]], limit: int | None) -> Iterator[list[Record]]:
    """The first `limit` tasks of the batches (None: all), read no further."""
    left = limit
    for batch in batches:
        if left is None:
            yield batch
            continue
        if left <= 0:
            return
        yield batch[:left]
        left -= len(batch)


def _linked(qs: queue.QueueState, batches: Iterable[list[Record]]) -> Iterator[list[Record]]:
    """Each batch as shown (queue.shown with the whole state)."""
    for batch in batches:
        yield queue.shown_with(qs, batch)


def _encoded(fold: Fold, found: list[tuple[bytes, str | None]]) -> list[bytes]:
    """The tasks found, (element, None or the id of a task whose element is not as shown)
    as the store keeps them, as json prints them: a pending task's as they are (its links
    in them: aidp.store.shown), another's with links (in progress: a lease's marks go by
    the clock) decoded, shown and encoded again."""
    rest = [tid for _element, tid in found if tid is not None]
    if not rest:
        return [element for element, _tid in found]
    qs = queue.state(fold, about=rest, own=True)
    linked = queue.linked_ids(qs)
    return [bytes(json_elements([queue.with_extras(qs, orjson.loads(element))]))
            if tid in linked else element for element, tid in found]


def _holders(qs: queue.QueueState) -> list[str]:
    """Who holds a task (the first claim of each), sorted."""
    return sorted({c["assignee"] for claims in qs.claims.values() for c in claims[:1]})
