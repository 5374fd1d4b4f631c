"""A session's plan, its TODO list: read it, replace it whole (MCP `todo_write`, an
agent's own plan tool mirrored by a hook), or change it (`aidp todo …`, the loop); every
session's list and the earlier ones (`todo list`), load one into a session (`todo
load`), the sessions that have one (shell completion). The list's rules are
aidp.todos'; each change is one locked read-modify-append."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from aidp import todos
from aidp.app.project import Project
from aidp.core.errors import InvalidInput
from aidp.core.plain import Plain
from aidp.core.terminal import inert
from aidp.tasklist.fold import Fold


def read_plan(project: Project, session: str) -> todos.TodoList:
    """The session's list as it is now."""
    return todos.current(project.read(), session)


def write_plan(project: Project, session: str, entries: Sequence[dict[str, Any]]
               ) -> todos.TodoList:
    """Replace the session's list with `entries` (content, status, priority: as an
    agent's plan tool gives them; items already there keep their ids and subtasks):
    the list as it now is."""
    plan = list(entries)
    return todos.change(project.log, session, lambda todo: todos.set_plan(todo, plan))


def update_plan(project: Project, session: str,
                change: Callable[[todos.TodoList], todos.TodoList | None]) -> todos.Edit:
    """Change the session's list under the lock, on its newest state (`change` may run
    more than once; returning None or an equal list writes nothing): what a hook or the
    loop does on an event (a new prompt, a pause, the agent's plan followed)."""
    return todos.edit(project.log, session, change)


def change_plan(project: Project, session: str,
                change: Callable[[todos.TodoList], todos.TodoList | None]) -> todos.Edit:
    """Change the session's list: `change` is tried on the list as it is on disk first,
    so a change it refuses (a bad position) creates nothing, then made under the lock
    on the newest state (it may run more than once). The edit: before, after, written."""
    change(todos.current(project.read(), session))
    return todos.edit(project.log, session, change)


def sessions(project: Project) -> list[str]:
    """Every session with a recorded list, in no particular order (shell completion)."""
    return [todo.session for todo in todos.all_lists(project.read())]


def past_plans(project: Project, fold: Fold) -> list[todos.TodoList]:
    """The lists no session shows any more (todos.past_lists: a scan of the tasklist of
    this worktree and of every other live one, as the fold reads them: docs/guide.md,
    "Worktrees by hand")."""
    from aidp.tasklist import worktrees

    data = [project.log.read_lines()]
    repo = project.log.shared()
    if repo is not None:
        data += [worktrees.read_tasklist(path) or b"" for path, own in repo.tasklists()
                 if not own]
    return todos.past_lists(fold, b"\n".join(data))


def plan_lists(project: Project, session: str, *, everything: bool = False
               ) -> list[todos.Summary]:
    """Every session's list (`todo list`): `session`'s first, then by last change,
    newest first; with `everything`, the earlier lists too (cleared, replaced), each
    with the id `load_plan` takes."""
    fold = project.read()
    return todos.summaries(fold, session, past_plans(project, fold) if everything else ())


def would_replace(mine: todos.TodoList, chosen: todos.TodoList) -> bool:
    """Loading `chosen` would throw away the items of the active list `mine` (that are
    not the same items)."""
    return bool(mine.visible) and (
        [todos.item_out(i) for i in mine.items] != [todos.item_out(i) for i in chosen.items])


class Loaded(Plain):
    """What `load_plan` did: the edit (before, after, written), the list loaded
    (`source`), and which load it was (`kind`): `unchanged` (the session has it active
    already), `earlier` (an earlier list of its session, by its id), `restored` (the
    session's own list, cleared before) or `copied` (another session's)."""

    _fields = ("edit", "source", "kind")

    def __init__(self, edit: todos.Edit, source: todos.TodoList, kind: str) -> None:
        self.edit = edit
        self.source = source
        self.kind = kind


def load_plan(project: Project, session: str, source: str, *, replace: bool,
              confirm: Callable[[todos.TodoList, todos.TodoList], None]) -> Loaded:
    """Copy the list `source` names (a session, a number of `todo list`, an earlier
    list's id: todos.pick_source) into `session` and make it active. Unless `replace`,
    the items of an active list are thrown away only once `confirm(mine, chosen)` has
    returned (it raises to refuse: nothing written), and only if the list did not
    change meanwhile (InvalidInput, nothing written)."""
    fold = project.read()
    chosen = todos.pick_source(fold, source, session, lambda: past_plans(project, fold))
    mine = todos.current(fold, session)
    if not replace and would_replace(mine, chosen):
        confirm(mine, chosen)

    def load_it(todo: todos.TodoList) -> todos.TodoList:
        if not replace and not todos.same(todo, mine) and would_replace(todo, chosen):
            raise InvalidInput(f"The TODO list of session {inert(session)} changed while "
                               "aidp asked; nothing loaded: run the command again")
        return todos.load(todo, chosen)

    done = todos.edit(project.log, session, load_it)
    if not done.written:
        kind = "unchanged"
    elif chosen.epoch is not None and chosen.epoch != todos.current(fold, chosen.session).epoch:
        kind = "earlier"
    elif chosen.session == session:
        kind = "restored"
    else:
        kind = "copied"
    return Loaded(done, chosen, kind)
