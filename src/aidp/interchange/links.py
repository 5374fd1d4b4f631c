"""The work-queue links an import files: `dep` and `parent` records between the tasks
of one source, minus every link that lies on a cycle. Linear in the links: one pass
over the whole wait graph (issue 27: a cycle check per link took seconds on a long
chain, under the write lock). Pure."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

from aidp.core.model import Record

if TYPE_CHECKING:
    from aidp.tasklist.fold import Fold


class Item(Protocol):
    """What the links read of an imported item (`aidp.interchange.Incoming` is one)."""

    @property
    def key(self) -> str: ...  # its source key

    @property
    def blocked_by(self) -> Sequence[str]: ...  # the source keys of the items it waits on

    @property
    def parent(self) -> str | None: ...  # the source key of its epic


def links(fold: Fold, prefix: str, new_items: Sequence[tuple[Item, str]],
          stamp: str) -> list[Record]:
    """Dependency and parent records for the newly filed items (item, task id), to tasks
    of the same source filed now or by an earlier import (its source records: the typed
    records whose id starts with `prefix`, each naming its item's task). A link to an
    item never imported is left out; so is every link on a cycle of the wait graph (the
    links already in the queue with the new ones): which of a cycle's links to keep
    would depend on the order of the file, so none is kept, and the note keeps them
    all."""
    if not any(item.blocked_by or item.parent for item, _tid in new_items):
        return []
    from aidp.backlog import queue

    kind = prefix.partition(":")[0]  # a source record's id starts with its type
    task_of = {rid[len(prefix):]: record.get("task")
               for rid, _key, record in fold.typed_records(kinds=(kind,))
               if rid.startswith(prefix) and isinstance(record.get("task"), str)}
    task_of.update((item.key, tid) for item, tid in new_items)
    # aidp's own formats (markdown) name tasks by id: one already here counts too
    task_of.update((key, key) for item, _tid in new_items
                   for key in (*item.blocked_by, item.parent or "")
                   if key not in task_of and key in fold.tasks)
    graph = queue.wait_graph(queue.state(fold))  # task → what it waits on
    proposed: list[tuple[str, str, Record]] = []  # (waiter, waited, record)
    for item, tid in new_items:
        for key in dict.fromkeys(item.blocked_by):
            blocker = task_of.get(key)
            if blocker is None or blocker == tid:
                continue
            proposed.append((tid, blocker, {
                "type": queue.DEP, "id": queue.dep_id(tid, blocker), "task": tid,
                "blocked_by": blocker, "updated_at": stamp}))
        epic = task_of.get(item.parent) if item.parent else None
        if epic and epic != tid:  # an epic waits on its children
            proposed.append((epic, tid, {
                "type": queue.PARENT, "id": queue.parent_id(tid), "task": tid,
                "parent": epic, "updated_at": stamp}))
    for waiter, waited, _record in proposed:
        graph.setdefault(waiter, []).append(waited)
    component = components(graph)
    return [record for waiter, waited, record in proposed
            if component[waiter] != component[waited]]


def components(graph: dict[str, list[str]]) -> dict[str, int]:
    """Each node's strongly connected component (Tarjan's algorithm, without recursion:
    a chain is as long as the file). An edge lies on a cycle exactly when both its ends
    are in one component. graphlib would name one cycle; this finds every such edge in
    one pass over the nodes and edges."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    component: dict[str, int] = {}

    def visit(node: str) -> Iterator[str]:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        return iter(graph.get(node, ()))

    for root in graph:
        if root in index:
            continue
        work = [(root, visit(root))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    work.append((child, visit(child)))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component[member] = index[node]
                        if member == node:
                            break
    return component
