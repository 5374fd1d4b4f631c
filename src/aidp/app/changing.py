"""Changing tasks: a move to another status (start, done, abandon, reopen), an edit, a
note, a link added or removed (block, unblock). Each is one locked read-modify-append
(the domain's: aidp.backlog.tasks, aidp.backlog.queue) and returns what it did, with the
short id of every task it names, read from the state before the change (the ids a
person typed, as `tasks list` showed them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aidp.app.project import Project
from aidp.backlog import queue, tasks
from aidp.backlog.ids import short_ids
from aidp.core.model import Record
from aidp.core.plain import Plain
from aidp.tasklist.fold import Fold


class Changed(Plain):
    """What a change did to each task it names: `changes` (the record now, and whether
    it changed), `short_ids` (full id → the short id to show), `lost` (a line for each
    of them the actor held and lost: lost_claims)."""

    _fields = ("changes", "short_ids", "lost")

    def __init__(self, changes: list[queue.Change], short_ids: dict[str, str],
                 lost: list[str] | None = None) -> None:
        self.changes = changes
        self.short_ids = short_ids
        self.lost = [] if lost is None else lost

    def tasks(self) -> list[Record]:
        return [change.task for change in self.changes]


def lost_claims(project: Project, fold: Fold, ids: Sequence[str]) -> list[str]:
    """A line for each of these tasks that the project's actor (AIDP_ACTOR, else git's
    user.email, else the login name) held and lost — taken over when its lease ran out,
    or held by an earlier claim from another clone — naming who holds it now. The actor
    is looked up only when one of them has such a claim."""
    return queue.lost(fold, ids, lambda: queue.default_actor(project.root))


def transition(project: Project, refs: Sequence[str], status: str, *,
               reason: str | None = None,
               expect: Mapping[str, str | None] | None = None) -> Changed:
    """Move the tasks `refs` names to `status` (a reason for abandoned); every id is
    checked before anything is written. A task back to pending is released from its
    claims. The fold read first is the one the change reuses (the file is unchanged
    until it writes). `expect`: what a view showed of the tasks' fields, checked under
    the lock (aidp.backlog.queue.seen: a field changed since refuses it all)."""
    before = project.read()
    changes = tasks.set_status(project.log, refs, status, reason=reason, expect=expect)
    named = [c.task["id"] for c in changes]
    return Changed(changes, short_ids(before, named), lost_claims(project, before, named))


class Linked(Plain):
    """What block/unblock did: the task, the ids it now waits on (or no longer does:
    `changed`) and those left as they were, with the short id of each."""

    _fields = ("task", "changed", "unchanged", "short_ids")

    def __init__(self, linked: queue.Linked, short: dict[str, str]) -> None:
        self.task = linked.task
        self.changed = linked.changed
        self.unchanged = linked.unchanged
        self.short_ids = short


def _linked(before: Fold, linked: queue.Linked) -> Linked:
    named = [linked.task["id"], *linked.changed, *linked.unchanged]
    return Linked(linked, short_ids(before, named))


def block(project: Project, ref: str, on: Sequence[str]) -> Linked:
    """The task `ref` names waits on every task `on` names; a dependency that would
    close a cycle is refused (DependencyCycle) and nothing is written."""
    before = project.read()
    return _linked(before, queue.block(project.log, ref, on))


def unblock(project: Project, ref: str, on: Sequence[str]) -> Linked:
    """The task `ref` names no longer waits on the tasks `on` names."""
    before = project.read()
    return _linked(before, queue.unblock(project.log, ref, on))


def edit_task(project: Project, ref: str, *, description: str | None = None,
              priority: str | None = None, add_tags: Sequence[str] = (),
              remove_tags: Sequence[str] = (), parent: str | None = None,
              detach: bool = False, body: str | None = None,
              task_type: str | None = None,
              expect: Mapping[str, str | None] | None = None) -> Changed:
    """Change a task's description, priority, tags, epic (`parent`; `detach`: out of
    its epic), body ("" removes it) or type in one write; anything refused writes
    nothing (`expect`: as transition's)."""
    before = project.read()
    change = queue.edit(project.log, ref, description=description, priority=priority,
                        add_tags=add_tags, remove_tags=remove_tags, parent=parent,
                        detach=detach, body=body, task_type=task_type, expect=expect)
    named = [change.task["id"]]
    return Changed([change], short_ids(before, named), lost_claims(project, before, named))


class Noted(Plain):
    """A note added: its record, the short id of its task, and a line if the actor held
    the task and lost it (lost_claims)."""

    _fields = ("note", "short_id", "lost")

    def __init__(self, note: Record, short_id: str, lost: list[str]) -> None:
        self.note = note
        self.short_id = short_id
        self.lost = lost

    def shown(self) -> Record:
        """The note as `--json` shows it: its task, text, author, time."""
        return {"task": self.note["task"], **queue.note_out(self.note)}


def note_task(project: Project, ref: str, text: str, *, author: str | None = None) -> Noted:
    """Append a note to the task `ref` names (`author`: who writes it, checked)."""
    before = project.read()
    record = queue.note(project.log, ref, text, author=author)
    tid = str(record["task"])
    return Noted(record, short_ids(before, [tid]).get(tid, tid),
                 lost_claims(project, before, [tid]))


class Undone(Plain):
    """What an undo did: the task as it is now, what changed back (field → (the value it
    had, the value it has again)), and its short id."""

    _fields = ("task", "changes", "short_ids")

    def __init__(self, task: Record, changes: dict[str, tuple[object, object]],
                 short_ids: dict[str, str]) -> None:
        self.task = task
        self.changes = changes
        self.short_ids = short_ids


def undo_task(project: Project, ref: str) -> Undone:
    """Put the task `ref` names back to its previous recorded state (appended again, so
    its history shows both)."""
    from aidp.backlog import history

    before = project.read()
    done = history.undo(project.log, ref)
    return Undone(done.task, done.changes, short_ids(before, [done.task["id"]]))
