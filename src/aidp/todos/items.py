"""A TODO list and its items: the model, pure (no I/O, no storage)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Final, NotRequired, TypedDict, cast

from aidp.core.errors import AidpError, InvalidInput
from aidp.core.model import MAX_DESCRIPTION, PRIORITIES, clean_text
from aidp.core.plain import Plain

# The bound on a plan, wherever one comes in (an agent's plan tool through its hooks or
# `aidp run`, MCP todo_write, `aidp todo add|load`): a TODO list holds at most MAX_ITEMS
# entries, subtasks counted, each at most MAX_ITEM_LENGTH characters. A longer plan is
# no plan a model keeps in view, and a flood must not reach the git-tracked tasklist.
MAX_ITEMS = 100
MAX_ITEM_LENGTH = MAX_DESCRIPTION

ITEM_STATUSES = ("pending", "in_progress", "completed")
SUBTASK_STATUSES = ("pending", "completed")
DEFAULT_PRIORITY = "medium"
NO_ACTIVE = "No active TODOs"
# Kept on an item while it has a checklist: the status it had before, restored when
# its last subtask is deleted (so adding then deleting a subtask changes nothing).
OWN_STATUS: Final = "own_status"


class Subtask(TypedDict):
    """One checklist entry of an item (keys this version does not know are kept)."""

    id: str
    content: str
    status: str  # pending or completed


class TodoItem(TypedDict):
    """One item of a list, as `normal_item` leaves it (keys this version does not know
    are kept)."""

    id: str
    content: str
    status: str  # one of ITEM_STATUSES; derived from the checklist when it has one
    priority: str
    subtasks: list[Subtask]
    own_status: NotRequired[str]  # OWN_STATUS


class PlanTooLarge(InvalidInput):
    """A plan or list over MAX_ITEMS entries (exit 2): refused whole, nothing written."""


def check_size(count: int, *, what: str = "The plan") -> None:
    """PlanTooLarge when `count` entries are more than a TODO list holds."""
    if count > MAX_ITEMS:
        raise PlanTooLarge(
            f"{what} has {count:,} items; a TODO list holds at most {MAX_ITEMS} (subtasks "
            "counted): refused, nothing was written")


def size(items: Iterable[TodoItem]) -> int:
    """The entries of a list against MAX_ITEMS: items and their subtasks."""
    return sum(1 + len(item.get("subtasks") or []) for item in items)


class TodoListNotFound(AidpError):
    """`todo load` named a session (or number) that has no saved list."""


class TodoList(Plain):
    """One session's list, folded from the newest todo_list record.

    Written out, not a dataclass (aidp.core.plain: no code generated at every start-up
    of a hook): equal when session, items, active, paused, pause_reason and updated_at
    are; `replace` is dataclasses.replace's."""

    # Whose list it is (`owner`, a git identity), recorded with the list's state. Storage
    # details, not part of the list's content: which generation of the session's items
    # this is (`epoch`), and each item's place among its siblings (`ranks`).
    __slots__ = ("active", "epoch", "items", "owner", "pause_reason", "paused", "ranks",
                 "session", "updated_at")
    _fields = ("session", "items", "active", "paused", "pause_reason", "updated_at")

    def __init__(self, session: str, items: list[TodoItem] | None = None,
                 active: bool = False, paused: bool = False, pause_reason: str | None = None,
                 updated_at: str | None = None, owner: str | None = None,
                 epoch: str | None = None, ranks: dict[str, str] | None = None) -> None:
        self.session = session
        self.items: list[TodoItem] = [] if items is None else items
        self.active = active
        self.paused = paused
        self.pause_reason = pause_reason
        self.updated_at = updated_at
        self.owner = owner
        self.epoch = epoch
        self.ranks: dict[str, str] = {} if ranks is None else ranks

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, owner={self.owner!r})"

    def replace(self, **changes: Any) -> TodoList:
        """A new list with `changes` (names of its fields) and the rest of this one's."""
        new = TodoList.__new__(TodoList)
        for name in self.__slots__:
            setattr(new, name, changes.pop(name) if name in changes else getattr(self, name))
        if changes:
            raise TypeError(f"TodoList has no field {', '.join(changes)}")
        return new

    @property
    def visible(self) -> list[TodoItem]:
        """The items `show`, positions and `run` work on: none once the list is cleared."""
        return self.items if self.active else []


def derived_status(item: TodoItem) -> str:
    """An item with a checklist: none completed → pending, some → in_progress, all →
    completed. Without one, its own status."""
    subtasks = item.get("subtasks") or []
    if not subtasks:
        status = item.get("status")
        return status if status in ITEM_STATUSES else "pending"
    done = sum(1 for s in subtasks if s.get("status") == "completed")
    if done == 0:
        return "pending"
    return "completed" if done == len(subtasks) else "in_progress"


def progress(item: TodoItem) -> tuple[int, int]:
    """(completed subtasks, subtasks)."""
    subtasks = item.get("subtasks") or []
    return sum(1 for s in subtasks if s.get("status") == "completed"), len(subtasks)


def counts(items: Iterable[TodoItem]) -> dict[str, int]:
    found = dict.fromkeys(ITEM_STATUSES, 0)
    for item in items:
        found[derived_status(item)] += 1
    return found


def has_open_items(todo: TodoList) -> bool:
    """Active, with at least one item not completed."""
    return any(derived_status(item) != "completed" for item in todo.visible)


def new_id(taken: set[str]) -> str:
    """A new item id (8 hex digits) not in `taken`."""
    while True:
        candidate = os.urandom(4).hex()  # what secrets.token_hex does, without ~4 ms of imports
        if candidate not in taken:
            return candidate


def item_ids(items: Iterable[TodoItem]) -> set[str]:
    """The ids of `items` and of their subtasks."""
    found: set[str] = set()
    for item in items:
        found.add(str(item.get("id")))
        found.update(str(s.get("id")) for s in item.get("subtasks") or [])
    return found


def clean_content(text: str) -> str:
    """A TODO description, checked and cleaned as every writer stores it."""
    return clean_text(text, what="TODO description", limit=MAX_ITEM_LENGTH)


def _normal_subtask(raw: Any, number: str) -> Subtask | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), str):
        return None
    sub: dict[str, Any] = dict(raw)
    sub["id"] = str(sub["id"]) if sub.get("id") is not None else number
    sub["status"] = "completed" if sub.get("status") == "completed" else "pending"
    return cast("Subtask", sub)


def normal_item(raw: Any, number: int) -> TodoItem | None:
    """An item as stored, tolerant of hand edits: unreadable parts fall back to defaults,
    keys this version does not know are kept."""
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), str):
        return None
    item: dict[str, Any] = dict(raw)
    item["id"] = str(item["id"]) if item.get("id") is not None else str(number)
    if item.get("priority") not in PRIORITIES:
        item["priority"] = DEFAULT_PRIORITY
    raw_subs = item["subtasks"] if isinstance(item.get("subtasks"), list) else []
    subs = [_normal_subtask(s, f"{number}.{n}") for n, s in enumerate(raw_subs, start=1)]
    item["subtasks"] = [s for s in subs if s is not None]
    if not item["subtasks"]:
        item.pop(OWN_STATUS, None)
    item["status"] = derived_status(cast("TodoItem", item))
    return cast("TodoItem", item)


def item_out(item: TodoItem, *, public: bool = False) -> dict[str, Any]:
    """The item in the documented key order, its status derived; `public` leaves out
    what only the stored record needs."""
    out: dict[str, Any] = {
        "id": item["id"],
        "content": item["content"],
        "status": derived_status(item),
        "priority": item.get("priority", DEFAULT_PRIORITY),
        "subtasks": [
            {"id": s["id"], "content": s["content"], "status": s["status"],
             **{k: v for k, v in s.items() if k not in ("id", "content", "status")}}
            for s in item.get("subtasks") or []
        ],
    }
    for key, value in item.items():
        if key not in out and not (public and key == OWN_STATUS):
            out[key] = value
    return out


def same(a: TodoList, b: TodoList) -> bool:
    """Equal content (the time of the change aside)."""
    return (
        a.session == b.session
        and a.active == b.active
        and a.paused == b.paused
        and a.pause_reason == b.pause_reason
        and [item_out(i) for i in a.items] == [item_out(i) for i in b.items]
    )


def copy_list(todo: TodoList) -> TodoList:
    """A copy of `todo` a change may edit in place (items, subtasks and ranks copied)."""
    items: list[TodoItem] = [{**i, "subtasks": [s.copy() for s in i.get("subtasks") or []]}
                             for i in todo.items]
    return todo.replace(items=items, ranks=dict(todo.ranks))


def show_json(todo: TodoList) -> dict[str, Any]:
    """`todo show --json`: {"session", "active", "paused", "items"}, statuses derived."""
    items = todo.visible
    return {
        "session": todo.session,
        "active": bool(items),
        "paused": todo.paused,
        "items": [item_out(i, public=True) for i in items],
    }
