"""A pending task as `tasks list --json` shows it, kept in its row (`task.shown`): its
record with the keys its own typed records add (docs/reference.md, "JSON output"), so
that listing the pending tasks joins stored bytes and decodes none (docs/store.md).

A pending task's keys depend on no clock: no claim holds it (a lease is shown only on
a task in progress, whose keys are still joined when listed), no close reason shows,
and a listing shows no body. What remains, by the work queue's rule
(aidp.backlog.queue.folded.state and extras, which the tests hold this to): its type
unless `task`, its blockers (dependency records not removed, oldest fold key first),
its parent (the last parent record in the fold's order), its notes (oldest first).
Set again by every fill for each pending task whose row or one of whose typed records
it wrote; NULL where the task shows nothing beside its record (`body` is then what it
prints). A change of this rule (or of the queue's) changes the store's format
(db.FORMAT): stores built before are rebuilt, never read with the old elements.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from typing import Any

import orjson

from aidp.core.model import Record, json_elements, note_out, ts_of
from aidp.tasklist.line import reread

DEP, PARENT, NOTE, TYPE = "dep", "parent", "note", "task_type"
_KINDS = "('dep', 'parent', 'note', 'task_type')"
_IN = " AND {column} IN (SELECT value FROM json_each(?))"


def refresh(conn: sqlite3.Connection, tasks: Collection[str] | None) -> None:
    """Set `shown` of each pending task of `tasks` (None: every task, a cold build's
    tables without indexes: read in full, no look-up by id)."""
    params: tuple[Any, ...] = ()
    if tasks is not None:
        if not tasks:
            return
        params = (orjson.dumps(sorted(tasks)).decode(),)
    ids = conn.execute("SELECT id FROM task WHERE status = 'pending'"
                       + ("" if tasks is None else _IN.format(column="id")), params).fetchall()
    if not ids:
        return
    found: dict[str, list[tuple[tuple[int, int], Record]]] = {tid: [] for (tid,) in ids}
    del ids
    for task, ts, line, body in conn.execute(
            f"SELECT task, ts, line, body FROM typed WHERE +kind IN {_KINDS}"
            + ("" if tasks is None else _IN.format(column="task")) + " ORDER BY seq", params):
        own = found.get(task)
        record = reread(body) if own is not None else None
        if own is not None and record is not None:
            own.append(((ts, line), record))
    # The rows' bodies streamed, and only the elements that differ from what the row
    # holds: a cold build's rows start NULL, and most pending tasks show nothing more
    # (at 1M events 12.5k of 47k), so it never holds every pending row at once.
    updates = [(shown(tid, body, found[tid]) if found[tid] else None, seq)
               for seq, tid, body in conn.execute(
                   "SELECT seq, id, body FROM task WHERE status = 'pending'"
                   + ("" if tasks is None else _IN.format(column="id")), params)
               if found.get(tid) or tasks is not None]
    conn.executemany("UPDATE task SET shown = ? WHERE seq = ?", updates)


def shown(tid: str, body: bytes, records: list[tuple[tuple[int, int], Record]]) -> bytes | None:
    """The element of pending task `tid` (its row's `body`) with the keys of its own
    records (fold key, record; in the fold's order), None when they add none."""
    kind: str | None = None
    edges: list[tuple[tuple[int, int], str]] = []
    parent: str | None = None
    notes: list[Record] = []
    for key, record in records:
        what = record.get("type")
        if _text(record, "task") != tid:
            continue
        if what == TYPE:
            kind = _text(record, TYPE)
        elif what == DEP:
            blocker = _text(record, "blocked_by")
            if blocker is not None and record.get("removed") is not True and blocker != tid:
                edges.append((key, blocker))
        elif what == PARENT:
            value = _text(record, "parent")
            if value is not None and value != tid:
                parent = value
        elif what == NOTE and isinstance(record.get("text"), str):
            notes.append(record)
    more: Record = {}
    if kind is not None and kind != "task":
        more[TYPE] = kind
    if edges:
        edges.sort(key=lambda edge: edge[0])
        more["blocked_by"] = [blocker for _key, blocker in edges]
    if parent is not None:
        more["parent"] = parent
    if notes:
        notes.sort(key=lambda n: (ts_of(n, "created_at"), n.get("id", "")))
        more["notes"] = [note_out(n) for n in notes]
    if not more:
        return None
    return bytes(json_elements([{**orjson.loads(body), **more}]))


def _text(record: Record, key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) and value else None

