"""The continuation policy of `aidp run` (and of the hooks that stand in for it): when
a lazy agent is prompted again, with which item, and what a new user prompt does to
the TODO list. Pure."""

from __future__ import annotations

from dataclasses import replace

from aidp.todos import TodoList, derived_status, has_open_items


def on_user_prompt(todo: TodoList) -> TodoList:
    """A new user prompt: the pause is lifted; a list whose items are all completed is
    cleared; an empty list stays as it is; otherwise the list is kept."""
    lifted = replace(todo, paused=False, pause_reason=None)
    items = todo.visible
    if items and all(derived_status(i) == "completed" for i in items):
        return replace(lifted, active=False)
    return lifted


def continuation_item(todo: TodoList) -> dict | None:
    """The item a continuation prompt names: the first in_progress, else the first pending."""
    items = [dict(i, status=derived_status(i)) for i in todo.visible]
    for wanted in ("in_progress", "pending"):
        for item in items:
            if item["status"] == wanted:
                return item
    return None


def should_continue(todo: TodoList, *, progressed: bool, attempts: int, max_attempts: int) -> bool:
    """Re-prompt a lazy agent only when the turn made no progress, items are still open,
    the list is not paused and the attempts are not used up."""
    return (
        not progressed
        and has_open_items(todo)
        and not todo.paused
        and attempts < max_attempts
    )
