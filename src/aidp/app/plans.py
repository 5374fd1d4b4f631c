"""A session's plan, its TODO list: read it, replace it whole (MCP `todo_write`, an
agent's own plan tool mirrored by a hook), or change it (`aidp todo …`, the loop). The
list's rules are aidp.todos'; each change is one locked read-modify-append."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from aidp import todos
from aidp.app.project import Project


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
