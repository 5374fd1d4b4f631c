"""Changing the queue's links: filing a task that needs the state (its links, or no open
duplicate), block/unblock, edit (parent, fields), notes. Each is one locked
read-modify-append."""


import os
from collections.abc import Mapping, Sequence

from aidp.backlog import details
from aidp.backlog.filing import Filed, open_duplicate, recent_duplicate
from aidp.backlog.ids import resolve_all, resolve_id, short_ids
from aidp.backlog.queue.claims import validate_actor
from aidp.backlog.queue.folded import (
    DEP,
    MAX_NOTE,
    NOTE,
    PARENT,
    Change,
    DependencyCycle,
    check_cycle,
    dep_id,
    find_path,
    next_stamp,
    parent_id,
    short,
    state,
    wait_graph,
)
from aidp.core.errors import InvalidInput
from aidp.core.model import (
    Record,
    canonical,
    clean_text,
    new_task,
    parse_ts,
    validate_description,
    validate_priority,
    validate_tag,
)
from aidp.core.plain import Plain
from aidp.tasklist.log import Fold, TaskLog


def _dep_record(fold: Fold, task: str, blocker: str, *, removed: bool = False) -> Record:
    rid = dep_id(task, blocker)
    record: Record = {"type": DEP, "id": rid, "task": task, "blocked_by": blocker}
    if removed:
        record["removed"] = True
    record["updated_at"] = next_stamp(fold.typed_record(rid))
    return record


def _parent_record(fold: Fold, task: str, parent: str | None) -> Record:
    rid = parent_id(task)
    record: Record = {"type": PARENT, "id": rid, "task": task}
    if parent is not None:
        record["parent"] = parent
    record["updated_at"] = next_stamp(fold.typed_record(rid))
    return record


def _self_dependency(tid: str, fold: Fold) -> InvalidInput:
    return InvalidInput(f"Invalid dependency: task {short(tid, fold)} cannot wait on itself; "
                        "give another task's id")


def _check_parent(graph: dict[str, list[str]], tid: str, parent: str, fold: Fold) -> None:
    if parent == tid:
        raise InvalidInput(f"Invalid parent: task {short(tid, fold)} cannot be its own parent; "
                           "give another task's id")
    check_cycle(graph, parent, tid,
                 f"making {short(parent, fold)} the parent of {short(tid, fold)}", fold)


def file(
    log: TaskLog,
    description: str,
    *,
    priority: str = "medium",
    tags: Sequence[str] = (),
    session: str | None = None,
    discovered_during: str | None = None,
    blocked_by: Sequence[str] = (),
    parent: str | None = None,
    unless_open: bool = False,
    body: str | None = None,
    task_type: str | None = None,
    filed_since: int | None = None,
) -> Filed:
    """File a task that needs the state to be filed, in one locked read-modify-append:
    with `unless_open`, not when an open task already has the same description
    (same_text: that task is returned, nothing written, its body and type neither, so
    two agents filing it at once file it once), nor (with `filed_since`, µs) any task
    filed since then; with links, the task, its body and type
    and its queue records in one write. Only the epic waits on the new task, so the one
    cycle it can close runs from one of its blockers to the epic: refused, nothing
    written. (A task that needs neither is one append, no read: tasks.add;
    aidp.app.filing chooses.)"""
    validate_description(description)
    body, task_type, _ = details.check(body, task_type)
    done: list[Filed] = []

    def change(fold: Fold) -> list[Record]:
        task = new_task(description, priority=priority, tags=list(tags), session=session,
                        discovered_during=discovered_during)
        if unless_open:
            existing = open_duplicate(fold, task["description"])
            if existing is None and filed_since is not None:
                existing = recent_duplicate(fold, task["description"], filed_since)
            if existing is not None:
                shown = short_ids(fold, [existing["id"]])[existing["id"]]
                done[:] = [Filed(existing, False, shown)]
                return []
        blockers = resolve_all(fold, blocked_by)
        epic = resolve_id(fold, parent) if parent is not None else None
        records = [task, *details.for_new_task(task, body=body, task_type=task_type),
                   *(_dep_record(fold, task["id"], b) for b in blockers)]
        if epic is not None:
            graph = wait_graph(state(fold))
            for blocker in blockers:
                path = find_path(graph, blocker, epic)
                if path is not None:
                    cycle = [task["id"], *path, task["id"]]
                    raise DependencyCycle(
                        f"a new task under {short(epic, fold)} waiting on "
                        f"{short(blocker, fold)}",
                        [short(n, fold) for n in cycle])
            records.append(_parent_record(fold, task["id"], epic))
        # Its shortest prefix among the ids already there (one index look-up).
        done[:] = [Filed(task, True, short_ids(fold, [task["id"]])[task["id"]])]
        return records

    log.update(change)
    return done[0]


class Linked(Plain):
    """What block/unblock/set_parent did: the task, the ids changed and left alone."""

    _fields = ("task", "changed", "unchanged")

    def __init__(self, task: Record, changed: list[str], unchanged: list[str]) -> None:
        self.task = task
        self.changed = changed
        self.unchanged = unchanged


def block(log: TaskLog, ref: str, on: Sequence[str]) -> Linked:
    """`ref` waits on every task of `on`. A dependency that would close a cycle is
    refused (DependencyCycle, exit 2) and nothing is written."""
    if not on:
        raise InvalidInput("Missing --on: give the id of a task it waits on")
    result: list[Linked] = []

    def change(fold: Fold) -> list[Record]:
        tid = resolve_id(fold, ref)
        blockers = resolve_all(fold, on)
        if tid in blockers:
            raise _self_dependency(tid, fold)
        qs = state(fold)
        graph = wait_graph(qs)
        have = set(qs.blockers.get(tid, ()))
        records, added, already = [], [], []
        for blocker in blockers:
            if blocker in have:
                already.append(blocker)
                continue
            check_cycle(graph, tid, blocker,
                         f"making {short(tid, fold)} wait on {short(blocker, fold)}", fold)
            graph.setdefault(tid, []).append(blocker)
            records.append(_dep_record(fold, tid, blocker))
            added.append(blocker)
        result[:] = [Linked(fold.tasks[tid], added, already)]
        return records

    log.update(change)
    return result[0]


def unblock(log: TaskLog, ref: str, on: Sequence[str]) -> Linked:
    if not on:
        raise InvalidInput("Missing --on: give the id of a task it waits on")
    result: list[Linked] = []

    def change(fold: Fold) -> list[Record]:
        tid = resolve_id(fold, ref)
        blockers = resolve_all(fold, on)
        have = set(state(fold, about=tid).blockers.get(tid, ()))
        records, removed, absent = [], [], []
        for blocker in blockers:
            if blocker in have:
                records.append(_dep_record(fold, tid, blocker, removed=True))
                removed.append(blocker)
            else:
                absent.append(blocker)
        result[:] = [Linked(fold.tasks[tid], removed, absent)]
        return records

    log.update(change)
    return result[0]


# --- edit and note ------------------------------------------------------------------------


def edit(
    log: TaskLog,
    ref: str,
    *,
    description: str | None = None,
    priority: str | None = None,
    add_tags: Sequence[str] = (),
    remove_tags: Sequence[str] = (),
    parent: str | None = None,
    detach: bool = False,
    body: str | None = None,
    task_type: str | None = None,
    expect: Mapping[str, str | None] | None = None,
) -> Change:
    """Change a task's description, priority, tags, epic, body or type in one locked
    write: a new snapshot of the task (so `history` keeps the old values) and/or a
    parent record, a body record, a type record (aidp.backlog.details: each only when
    its value changes; `body` "" removes the body). Anything refused (a bad value, a
    cycle, a field changed since the view of `expect` showed it: aidp.backlog.queue.seen)
    writes nothing at all."""
    if parent is not None and detach:
        raise InvalidInput("Conflicting --parent and --no-parent: give one of them")
    if (description is None and priority is None and not add_tags and not remove_tags
            and parent is None and not detach and body is None and task_type is None):
        raise InvalidInput("Nothing to edit: give --description, --priority, --add-tag, "
                           "--remove-tag, --parent, --no-parent, --body or --type")
    body, task_type, _ = details.check(body, task_type)
    text = validate_description(description) if description is not None else None
    level = validate_priority(priority) if priority is not None else None
    adding = [validate_tag(t) for t in add_tags]
    removing = [t.strip() for t in remove_tags]
    result: list[Change] = []

    def change(fold: Fold) -> list[Record]:
        tid = resolve_id(fold, ref)
        if expect:
            from aidp.backlog.queue.seen import check

            check(fold, tid, expect)
        task = fold.tasks[tid]
        records: list[Record] = []
        if parent is not None or detach:
            epic = resolve_id(fold, parent) if parent is not None else None
            qs = state(fold)
            current = qs.parent.get(tid)
            if epic != current:
                if epic is not None:
                    graph = wait_graph(qs)
                    if current is not None:  # the old epic stops waiting on it
                        graph[current] = [n for n in graph.get(current, []) if n != tid]
                    _check_parent(graph, tid, epic, fold)
                records.append(_parent_record(fold, tid, epic))
        records += details.changes(fold, tid, body=body, task_type=task_type)
        updated = dict(task)
        if text is not None:
            updated["description"] = text
        if level is not None:
            updated["priority"] = level
        tags = [t for t in task.get("tags") or [] if t not in removing]
        updated["tags"] = list(dict.fromkeys([*tags, *adding]))
        if canonical(updated) != canonical(task):
            updated["updated_at"] = next_stamp(task)
            task = canonical(updated)
            records.insert(0, task)
        # One change, one stamp: each record's own is past its previous one, and so is
        # the latest of them, which `tasks undo` reads as the change to take back.
        if records:
            stamp = max((r["updated_at"] for r in records), key=lambda at: parse_ts(at) or 0)
            for record in records:
                record["updated_at"] = stamp
        result[:] = [Change(task, changed=bool(records))]
        return records

    log.update(change)
    return result[0]


def note(log: TaskLog, ref: str, text: str, *, author: str | None = None) -> Record:
    """Append a note to a task; notes are never changed, so every clone's are kept."""
    body = clean_text(text, what="note", limit=MAX_NOTE)
    who = validate_actor(author) if author else None
    result: list[Record] = []

    def change(fold: Fold) -> list[Record]:
        tid = resolve_id(fold, ref)
        stamp = next_stamp(None)
        record: Record = {"type": NOTE, "id": f"{NOTE}:{tid}:{os.urandom(4).hex()}",
                          "task": tid, "text": body}
        if who:
            record["author"] = who
        record["created_at"] = stamp
        record["updated_at"] = stamp
        result[:] = [record]
        return [record]

    log.update(change)
    return result[0]
