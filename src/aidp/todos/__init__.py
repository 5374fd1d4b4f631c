"""Session TODO lists: the agent's working plan, one list per session.

A list is stored as small records in the event log, one per changed item (see
records.py and docs/file-format.md). Everything here is pure except
`change`/`edit`, which do the read-modify-append under the log's exclusive lock.

Positions are 1-based: `N`, `last`, `N.M`, `N.last`. An item's subtasks are its
checklist; an item with subtasks has a status derived from them.

    items.py      TodoList and its items: statuses, priorities, the documented item shape
    positions.py  parsing and resolving positions
    changes.py    the pure changes: add, delete, tick, untick, start, clear, pause, resume, load,
                  set_plan
    records.py    the storage: record types, ids, ranks, the records of a list's items
    state.py      records → lists: one session's list, every list (earlier ones too),
                  `todo list` summaries
    writer.py     edit/change: the locked read-modify-append of the changed records
    session.py    which session a command works on when it names none

The text of a list is `aidp.views.render.todo_text`; the continuation policy of `aidp run`
is `aidp.agent.continuation`.
"""

from __future__ import annotations

from aidp.todos.changes import (
    add,
    clear,
    delete,
    load,
    pause,
    resume,
    set_plan,
    start,
    tick,
    untick,
)
from aidp.todos.items import (
    DEFAULT_PRIORITY,
    ITEM_STATUSES,
    MAX_ITEM_LENGTH,
    MAX_ITEMS,
    NO_ACTIVE,
    OWN_STATUS,
    SUBTASK_STATUSES,
    PlanTooLarge,
    Subtask,
    TodoItem,
    TodoList,
    TodoListNotFound,
    check_size,
    counts,
    derived_status,
    has_open_items,
    item_out,
    progress,
    same,
    show_json,
)
from aidp.todos.positions import (
    LAST,
    POSITION_FORMS,
    Position,
    Target,
    locate,
    parse_position,
    resolve,
)
from aidp.todos.records import (
    HEAD_TYPE,
    ITEM_TYPE,
    RECORD_TYPE,
    rank_between,
    record_id,
    to_record,
    writer_id,
)
from aidp.todos.session import resolve_session
from aidp.todos.state import (
    Summary,
    all_lists,
    current,
    exists,
    from_record,
    past_lists,
    personal_session,
    pick_source,
    summaries,
)
from aidp.todos.writer import Edit, change, edit

__all__ = [
    "DEFAULT_PRIORITY",
    "HEAD_TYPE",
    "ITEM_STATUSES",
    "ITEM_TYPE",
    "LAST",
    "MAX_ITEMS",
    "MAX_ITEM_LENGTH",
    "NO_ACTIVE",
    "OWN_STATUS",
    "POSITION_FORMS",
    "RECORD_TYPE",
    "SUBTASK_STATUSES",
    "Edit",
    "PlanTooLarge",
    "Position",
    "Subtask",
    "Summary",
    "Target",
    "TodoItem",
    "TodoList",
    "TodoListNotFound",
    "add",
    "all_lists",
    "change",
    "check_size",
    "clear",
    "counts",
    "current",
    "delete",
    "derived_status",
    "edit",
    "exists",
    "from_record",
    "has_open_items",
    "item_out",
    "load",
    "locate",
    "parse_position",
    "past_lists",
    "pause",
    "personal_session",
    "pick_source",
    "progress",
    "rank_between",
    "record_id",
    "resolve",
    "resolve_session",
    "resume",
    "same",
    "set_plan",
    "show_json",
    "start",
    "summaries",
    "tick",
    "to_record",
    "untick",
    "writer_id",
]
