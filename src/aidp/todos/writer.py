"""Changing a session's TODO list: the locked read-modify-append that writes only the
records that changed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from aidp.core.model import Record, format_ts, now_micros, step_past
from aidp.core.plain import Plain
from aidp.tasklist.log import Fold, TaskLog
from aidp.todos.items import TodoList, copy_list, same
from aidp.todos.records import (
    HEAD_KEYS,
    NODE_KEYS,
    RECORD_TYPE,
    all_nodes,
    head_record,
    hex_of,
    new_generation,
    node_fields,
    node_record,
    parent_of,
    place_ranks,
    stored_item,
    tombstone,
    valid_rank,
    writer_id,
)
from aidp.todos.state import SessionState, session_state


def _changes(state: SessionState, after: TodoList, stamp: str,
             writer: str) -> tuple[list[Record], str]:
    """The records that take the stored list from `state` to `after`, and the generation."""
    base = _base(state, after, writer)
    records: list[Record] = []
    if base.head_changed:
        records.append(head_record(after, base.gen, stamp, writer))
    written = _node_records(after, base.gen, base.nodes, stamp, writer)
    records += [record for node, record in base.snapshot.items() if node not in written]
    records += written.values()
    return records, base.gen


class _Base(NamedTuple):
    """What a change is written against: the generation its records go to, the stored
    items (node records) they are compared with, the records an older version's
    snapshot becomes (written with the change), and whether the list's own fields
    (active, paused, …) are to be written."""

    gen: str
    nodes: dict[str, Record]
    snapshot: dict[str, Record]
    head_changed: bool


def _base(state: SessionState, after: TodoList, writer: str) -> _Base:
    before = state.todo
    legacy = state.head is not None and state.head.get("type") == RECORD_TYPE
    if state.head is None or after.epoch != before.epoch or (after.active
                                                             and not before.active):
        # A fresh list (cleared, loaded, made active again): a generation of its own.
        gen = after.epoch if after.epoch and after.epoch != before.epoch else new_generation()
        return _Base(gen, {}, {}, True)
    if legacy and state.head is not None:
        # The first change to a list that an older version wrote as a snapshot: its items
        # become a generation named after the snapshot, stamped with the snapshot's time,
        # so every clone that upgrades writes the same thing and real changes win over it.
        then = state.head.get("updated_at")
        gen = "s" + hex_of(f"{before.session}\0{then}")[:11]
        nodes = all_nodes(before, gen, then if isinstance(then, str) else None, writer)
        return _Base(gen, nodes, nodes, True)
    return _Base(before.epoch or new_generation(), state.nodes, {},
                 any(getattr(before, k) != getattr(after, k) for k in HEAD_KEYS))


def _node_records(after: TodoList, gen: str, old_nodes: dict[str, Record], stamp: str,
                  writer: str) -> dict[str, Record]:
    """A node record for each item and subtask of `after` that is new, moved or changed
    against `old_nodes` (ranked among its siblings so that the ones that stay keep their
    rank), and a tombstone for each stored one that is gone; by node id."""
    old_ranks = {n: r["rank"] for n, r in old_nodes.items() if valid_rank(r.get("rank"))}
    written: dict[str, Record] = {}
    seen: set[str] = set()
    groups: list[tuple[str | None, list[str]]] = [(None, [str(i["id"]) for i in after.items])]
    groups += [(str(i["id"]), [str(s["id"]) for s in i.get("subtasks") or []])
               for i in after.items]
    by_id: dict[str, dict[str, Any]] = {}
    for item in after.items:
        by_id.setdefault(str(item["id"]), stored_item(item))
        for sub in item.get("subtasks") or []:
            by_id.setdefault(str(sub["id"]), dict(sub))
    for parent, order in groups:
        siblings = {n: old_ranks[n] for n in order if n in old_ranks
                    and parent_of(old_nodes.get(n)) == parent}
        for node, rank in place_ranks(order, siblings).items():
            if node in seen:
                continue  # an id twice in a hand-made list: the first place counts
            seen.add(node)
            fields = {k: v for k, v in by_id[node].items() if k not in NODE_KEYS}
            previous = old_nodes.get(node)
            if (previous is not None and previous.get("deleted") is not True
                    and parent_of(previous) == parent and previous.get("rank") == rank
                    and node_fields(previous) == fields):
                continue
            written[node] = node_record(gen, {**fields, "id": node}, parent, rank, stamp,
                                         writer)
    for node, previous in old_nodes.items():
        if node not in seen and previous.get("deleted") is not True:
            written[node] = tombstone(gen, node, stamp, writer)
    return written


class Edit(Plain):
    """What an edit did: the list before and after, and whether anything was written."""

    __slots__ = _fields = ("before", "after", "written")

    def __init__(self, before: TodoList, after: TodoList, written: bool) -> None:
        self.before = before
        self.after = after
        self.written = written


def edit(log: TaskLog, session: str, fn: Callable[[TodoList], TodoList | None]) -> Edit:
    """Locked read-modify-append of the session's list: `fn` sees the newest state and
    returns the new one; only what changed is appended (a tick: one small record).
    Returning None or an equal list writes nothing, raising writes nothing either."""
    outcome: list[Edit] = []
    writer = writer_id(log.root)

    def apply(fold: Fold) -> list[Record]:
        state = session_state(fold, session)
        before = state.todo
        after = fn(copy_list(before))
        if after is None or same(before, after):
            outcome[:] = [Edit(before, before, written=False)]
            return []
        stamp = format_ts(step_past(state.newest, now_micros()))
        if after.owner is None:
            after = after.replace(owner=before.owner or _owner_for(log, session))
        records, gen = _changes(state, after.replace(session=session), stamp, writer)
        after = after.replace(session=session, updated_at=stamp, epoch=gen)
        outcome[:] = [Edit(before, after, written=True)]
        return records

    log.update(apply)
    return outcome[0]


def _owner_for(log: TaskLog, session: str) -> str | None:
    """Who a list belongs to, recorded when its head is first written: the person's git
    identity (see aidp.git)."""
    from aidp.tasklist.person import identity

    return identity(log.root)


def change(log: TaskLog, session: str, fn: Callable[[TodoList], TodoList | None]) -> TodoList:
    """Locked read-modify-append of the session's list; the list as it now is."""
    return edit(log, session, fn).after
