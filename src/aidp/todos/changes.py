"""The pure changes to a TODO list: each takes a list and returns the changed one."""

from __future__ import annotations

from typing import Any

from aidp.core.errors import InvalidInput
from aidp.core.model import PRIORITIES, validate_priority, validate_reason
from aidp.todos.items import (
    DEFAULT_PRIORITY,
    ITEM_STATUSES,
    MAX_ITEMS,
    OWN_STATUS,
    PlanTooLarge,
    Subtask,
    TodoItem,
    TodoList,
    check_size,
    clean_content,
    copy_list,
    derived_status,
    item_ids,
    new_id,
    size,
)
from aidp.todos.positions import Target, locate
from aidp.todos.records import new_generation

# --- pure changes -------------------------------------------------------------------


def add(
    todo: TodoList, position: str, content: str, *, priority: str | None = None
) -> tuple[TodoList, Target]:
    """Insert at `position` ('last' appends). A cleared list starts afresh."""
    target = locate(todo, position, insert=True)
    text = clean_content(content)
    items = [i.copy() for i in todo.visible]
    taken = item_ids(todo.items)
    if target.subtask is None:
        items.insert(target.item, {
            "id": new_id(taken),
            "content": text,
            "status": "pending",
            "priority": validate_priority(priority) if priority is not None else DEFAULT_PRIORITY,
            "subtasks": [],
        })
    else:
        if priority is not None:
            raise InvalidInput(
                f"Invalid --priority for subtask {target.label()}: subtasks are a checklist "
                "without priorities; give --priority to items (N or last) only"
            )
        parent = items[target.item]
        subs = list(parent.get("subtasks") or [])
        if not subs:
            parent[OWN_STATUS] = derived_status(parent)  # restored if the checklist goes
        subs.insert(target.subtask, {"id": new_id(taken), "content": text, "status": "pending"})
        parent["subtasks"] = subs
        parent["status"] = derived_status(parent)
    if size(items) > MAX_ITEMS:
        raise PlanTooLarge(
            f"Cannot add: a TODO list holds at most {MAX_ITEMS} items (subtasks counted), "
            f"and this one has {size(items) - 1:,}; nothing was written")
    return todo.replace(items=items, active=True), target


def delete(todo: TodoList, position: str) -> tuple[TodoList, Target, TodoItem | Subtask]:
    """Remove an item (with its subtasks) or a subtask; also returns what went."""
    target = locate(todo, position)
    items = [i.copy() for i in todo.visible]
    gone: TodoItem | Subtask
    if target.subtask is None:
        gone = items.pop(target.item)
    else:
        parent = items[target.item]
        subs = list(parent["subtasks"])
        gone = sub = subs.pop(target.subtask)
        parent["subtasks"] = subs
        if subs:
            parent["status"] = derived_status(parent)
        else:
            # The checklist is gone: the item gets back the status it had before it.
            fallback = derived_status({**parent, "subtasks": [sub]})
            own = parent.pop(OWN_STATUS, None)
            parent["status"] = own if own in ITEM_STATUSES else fallback
    return todo.replace(items=items, active=bool(items)), target, gone


def _checklist_refusal(verb: str, target: Target, item: TodoItem) -> InvalidInput:
    n = target.item + 1
    subs = item.get("subtasks") or []
    shown = ", ".join(f"{n}.{m}" for m in range(1, len(subs) + 1))
    how = "untick" if verb == "untick" else "tick"
    return InvalidInput(
        f"Cannot {verb} item {n}: it has a checklist ({shown}) and its status follows it; "
        f"{how} its subtasks instead, e.g. 'aidp todo {how} {n}.1'"
    )


def tick(todo: TodoList, position: str, *, completed: bool = True
         ) -> tuple[TodoList, Target]:
    """Mark an item without a checklist, or a subtask, completed — or, with
    `completed=False` (`untick`), not completed: back to pending. One that is so already
    comes back as it was (`todo` itself, so nothing is written): an agent that retries a
    tick never undoes it (docs/todo.md)."""
    target = locate(todo, position)
    items = [i.copy() for i in todo.visible]
    item = items[target.item]
    if target.subtask is None:
        if item.get("subtasks"):
            raise _checklist_refusal("tick" if completed else "untick", target, item)
        if (item["status"] == "completed") == completed:
            return todo, target
        item["status"] = "completed" if completed else "pending"
    else:
        subs = [s.copy() for s in item["subtasks"]]
        sub = subs[target.subtask]
        if (sub["status"] == "completed") == completed:
            return todo, target
        sub["status"] = "completed" if completed else "pending"
        item["subtasks"] = subs
        item["status"] = derived_status(item)
    return todo.replace(items=items), target


def untick(todo: TodoList, position: str) -> tuple[TodoList, Target]:
    """Mark an item without a checklist, or a subtask, not completed (pending again)."""
    return tick(todo, position, completed=False)


def start(todo: TodoList, position: str) -> tuple[TodoList, Target]:
    """Mark an item in_progress (items with a checklist follow it; subtasks are ticked)."""
    target = locate(todo, position)
    items = [i.copy() for i in todo.visible]
    item = items[target.item]
    if target.subtask is not None:
        raise InvalidInput(
            f"Cannot start subtask {target.label()}: subtasks are a checklist (pending or "
            f"completed); use 'aidp todo tick {target.label()}' or start item {target.item + 1}"
        )
    if item.get("subtasks"):
        raise _checklist_refusal("start", target, item)
    item["status"] = "in_progress"
    return todo.replace(items=items), target


def clear(todo: TodoList) -> TodoList | None:
    """Deactivate: `show` and `run` see nothing; the items stay in the record as history.
    A pause goes with the list it paused. None when there is nothing active or paused."""
    if not todo.active and not todo.paused:
        return None
    return todo.replace(active=False, paused=False, pause_reason=None)


def pause(todo: TodoList, reason: str) -> TodoList:
    """The agent is blocked: no continuation until the next user prompt."""
    return todo.replace(paused=True, pause_reason=validate_reason(reason))


def resume(todo: TodoList) -> TodoList | None:
    """Lift a pause (what the next user prompt does); None when there is none."""
    if not todo.paused:
        return None
    return todo.replace(paused=False, pause_reason=None)


def load(todo: TodoList, source: TodoList) -> TodoList:
    """Copy `source`'s items (active or cleared) into `todo` and make them active. Loading
    a plan is a fresh start, like a user prompt: a pause is lifted."""
    items = copy_list(source).items
    check_size(size(items), what=f"The saved list of {source.session!r}")
    return todo.replace(items=items, active=bool(items), paused=False, pause_reason=None,
                   epoch=new_generation())


_PLAN_STATUS = {"pending": "pending", "in_progress": "in_progress", "completed": "completed"}


def set_plan(todo: TodoList, entries: list[dict[str, Any]]) -> TodoList:
    """Replace the items with an agent's own plan: Claude's TodoWrite
    ([{"content", "status", "activeForm"?, "priority"?}]) or Codex's plan
    ([{"step", "status"}]). The list becomes active; an empty plan clears it.
    An entry whose content matches a current item keeps that item's id and priority."""
    if not isinstance(entries, list):
        raise InvalidInput("Invalid plan: expected a list of {content|step, status} entries")
    check_size(len(entries))
    previous = {i["content"]: i for i in todo.visible}
    taken = item_ids(todo.items)
    items: list[TodoItem] = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            raise InvalidInput(
                f"Invalid plan entry {number}: expected an object with content and status"
            )
        raw = entry.get("content", entry.get("step"))
        if not isinstance(raw, str):
            raise InvalidInput(f"Invalid plan entry {number}: it has no content (or step) text")
        text = clean_content(raw)
        status_raw = entry.get("status", "pending")
        word = str(status_raw).strip().lower().replace("-", "_").replace(" ", "_")
        status = _PLAN_STATUS.get(word)
        if status is None:
            raise InvalidInput(
                f"Invalid plan entry {number} status {status_raw!r}: "
                f"use one of {', '.join(ITEM_STATUSES)}"
            )
        before = previous.get(text)
        priority = entry.get("priority")
        if isinstance(priority, str) and priority.strip().lower() in PRIORITIES:
            priority = priority.strip().lower()
        else:
            priority = before.get("priority", DEFAULT_PRIORITY) if before else DEFAULT_PRIORITY
        if before is not None and before["id"] not in {i["id"] for i in items}:
            item_id = before["id"]
        else:
            item_id = new_id(taken)
        taken.add(item_id)
        items.append({"id": item_id, "content": text, "status": status, "priority": priority,
                      "subtasks": []})
    if not items:
        return todo.replace(active=False)
    return todo.replace(items=items, active=True)
