"""The continuation policy of `aidp run` (and of the hooks that stand in for it): when
a lazy agent is prompted again, with which item, what a new user prompt does to the
TODO list, how far a turn may go (`Limits`), when `run` without a prompt has nothing
to resume, and how a done/not-done plan keeps items in progress. Pure."""

from __future__ import annotations

from typing import Any

from aidp import todos
from aidp.core.errors import InvalidInput
from aidp.core.plain import Plain
from aidp.todos import TodoItem, TodoList, derived_status, has_open_items


class Limits(Plain):
    """How far one turn of `aidp run` may go: at most `max_continuations` re-prompts of
    a lazy agent, and `timeout` seconds in all (None: no limit). Checked here, once, when
    made (the CLI makes them from --max-continuations/--timeout before anything else is
    looked at), so a Loop never holds values it cannot use. (Written out, not a
    dataclass: aidp.core.plain; a hook's prompt and stop load this module.)"""

    __slots__ = _fields = ("max_continuations", "timeout")

    def __init__(self, max_continuations: int = 3, timeout: float | None = None) -> None:
        self.max_continuations = max_continuations
        self.timeout = timeout
        if self.max_continuations < 0:
            raise InvalidInput(
                f"Invalid --max-continuations {self.max_continuations}: use a whole number ≥ 0"
            )
        if self.timeout is not None and not self.timeout > 0:
            raise InvalidInput(f"Invalid --timeout {self.timeout:g}: use a number of seconds > 0")


def on_user_prompt(todo: TodoList) -> TodoList:
    """A new user prompt: the pause is lifted; a list whose items are all completed is
    cleared; an empty list stays as it is; otherwise the list is kept."""
    lifted = todo.replace(paused=False, pause_reason=None)
    items = todo.visible
    if items and all(derived_status(i) == "completed" for i in items):
        return lifted.replace(active=False)
    return lifted


def continuation_item(todo: TodoList) -> TodoItem | None:
    """The item a continuation prompt names: the first in_progress, else the first pending."""
    items: list[TodoItem] = [{**i, "status": derived_status(i)} for i in todo.visible]
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


def keep_in_progress(todo: todos.TodoList, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For a plan that only says done or not done: an entry still pending whose item
    the TODO list has in progress stays in progress."""
    started = {i["content"] for i in todo.visible if i.get("status") == "in_progress"}
    return [
        {**entry, "status": "in_progress"}
        if entry["status"] == "pending" and entry["content"] in started else entry
        for entry in entries
    ]


def nothing_to_resume(todo: todos.TodoList, *, max_continuations: int) -> str | None:
    """Why `aidp run` without a prompt has nothing to resume; None when it has."""
    session = todo.session
    if not todo.visible:
        return (f"Nothing to resume: session {session!r} has no active TODOs. "
                "Give a prompt: aidp run \"…\"")
    if not todos.has_open_items(todo):
        return (f"Nothing to resume: every TODO item of session {session!r} is completed. "
                "Give a prompt: aidp run \"…\"")
    if todo.paused:
        reason = f" ({todo.pause_reason})" if todo.pause_reason else ""
        return (f"Nothing to resume: the TODO list of session {session!r} is paused{reason}. "
                "A new prompt lifts the pause: aidp run \"…\"")
    if max_continuations == 0:
        return "Nothing to resume: --max-continuations is 0"
    return None
