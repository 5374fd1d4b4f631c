"""Showing tasks: one task with everything linked to it (`tasks show`), and tasks as
they are shown now (after a change). The join itself, a task with its queue keys, is
`aidp.backlog.queue.shown`: every surface's JSON goes through it."""

from __future__ import annotations

from collections.abc import Sequence

from aidp.app.changing import lost_claims
from aidp.app.project import Project
from aidp.backlog import details, queue
from aidp.backlog.ids import resolve_id, short_ids
from aidp.core.model import Record
from aidp.core.plain import Plain


def shown_now(project: Project, tasks: Sequence[Record], *, bodies: bool = False
              ) -> list[Record]:
    """`tasks` (records a change returned) with their queue keys as the state is now
    (`bodies`: their bodies too, as one task's show has it)."""
    return queue.shown(project.read(), tasks, bodies=bodies)


def shown_by_id(project: Project, ids: Sequence[str], *, bodies: bool = False
                ) -> list[Record]:
    """The tasks of `ids` as they are now, as shown (`bodies`: with their bodies)."""
    fold = project.read()
    return queue.shown(fold, fold.tasks_of(list(ids)), bodies=bodies)


# What a task shows beside its record in a page's fields (its type, its close reason).
_FIELDS = (details.TYPE, details.REASON)


class TaskDetail(Plain):
    """One task with its links, claim, notes and details: `shown` is its JSON (the task
    with what it shows beside it, `blocks`/`children` when it has any, its body last);
    the rest what a page shows: its type and close reason (`fields`, by their JSON
    keys), its body, the ids it waits on, blocks, its epic and children, each linked
    task's record (None: not in the backlog), the holder of its claim and later claims
    made on other clones, its notes, the short id of every id named, and a line if the
    actor held it and lost it (`lost`)."""

    _fields = ("task", "shown", "fields", "body", "blocked_by", "blocks", "parent",
               "children", "related", "holder", "later_claims", "notes", "short_ids", "lost")

    def __init__(self, task: Record, shown: Record, fields: Record, body: str | None,
                 blocked_by: list[str], blocks: list[str],
                 parent: str | None, children: list[str], related: dict[str, Record | None],
                 holder: Record | None, later_claims: list[Record], notes: list[Record],
                 short_ids: dict[str, str]) -> None:
        self.task = task
        self.shown = shown
        self.fields = fields
        self.body = body
        self.blocked_by = blocked_by
        self.blocks = blocks
        self.parent = parent
        self.children = children
        self.related = related
        self.holder = holder
        self.later_claims = later_claims
        self.notes = notes
        self.short_ids = short_ids
        self.lost: list[str] = []  # the actor held it and lost it (changing.lost_claims)


def show_task(project: Project, ref: str) -> TaskDetail:
    """The task `ref` names (a full id or a prefix), with everything linked to it."""
    fold = project.read()
    task = fold.tasks[resolve_id(fold, ref)]
    tid = task["id"]
    qs = queue.state(fold, about=tid, bodies=True)
    shown = dict(queue.shown(fold, [task], qs)[0])  # never the fold's own (memoised) record
    body = shown.pop(details.BODY, None)  # (last, after the links)
    blocks, children = list(qs.dependents.get(tid, ())), list(qs.children.get(tid, ()))
    if blocks:
        shown["blocks"] = blocks
    if children:
        shown["children"] = children
    if body is not None:
        shown[details.BODY] = body
    fields = {k: v for k, v in shown.items() if k in _FIELDS}
    parent = qs.parent.get(tid)
    blocked_by = list(qs.blockers.get(tid, ()))
    others = [*blocked_by, *blocks, *([parent] if parent else []), *children]
    related = {other: fold.tasks.get(other) for other in others}
    holder = qs.holder(task)
    detail = TaskDetail(task, shown, fields, body, blocked_by, blocks, parent, children,
                        related, holder,
                        list(qs.claims.get(tid, [])[1:]) if holder is not None else [],
                        list(qs.notes.get(tid, ())), short_ids(fold, [tid, *others]))
    detail.lost = lost_claims(project, fold, [tid])
    return detail
