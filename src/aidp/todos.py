"""Session TODO lists: the agent's working plan, one list per session.

A list is stored as `todo_list` records in the event log, one full snapshot per change
(see docs/todo.md). Everything here is pure except `change`/`edit`, which do the
read-modify-append of one snapshot under the log's exclusive lock.

Positions are 1-based: `N`, `last`, `N.M`, `N.last`. An item's subtasks are its
checklist; an item with subtasks has a status derived from them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from aidp.errors import AidpError, InvalidInput, InvalidPosition
from aidp.log import Fold, TaskLog
from aidp.model import (
    MAX_DESCRIPTION,
    PRIORITIES,
    UNKNOWN_TS,
    Record,
    clean_text,
    format_ts,
    next_updated_at,
    ts_of,
    validate_priority,
    validate_reason,
)

RECORD_TYPE = "todo_list"
ITEM_STATUSES = ("pending", "in_progress", "completed")
SUBTASK_STATUSES = ("pending", "completed")
DEFAULT_PRIORITY = "medium"
NO_ACTIVE = "No active TODOs"
# Kept on an item while it has a checklist: the status it had before, restored when
# its last subtask is deleted (so adding then deleting a subtask changes nothing).
OWN_STATUS = "own_status"

LAST: Literal["last"] = "last"
Index = int | Literal["last"]

POSITION_FORMS = "N, last, N.M or N.last (1-based, e.g. 2, last, 1.3, 1.last)"
# ASCII digits only: int() would also take '٣' or '1_0'.
_POSITION_RE = re.compile(
    r"(?:(?P<item>[1-9][0-9]*)|(?P<last>last))"
    r"(?:\.(?:(?P<sub>[1-9][0-9]*)|(?P<sublast>last)))?"
)


class TodoListNotFound(AidpError):
    """`todo load` named a session (or number) that has no saved list."""


@dataclass
class TodoList:
    """One session's list, folded from the newest todo_list record."""

    session: str
    items: list[dict] = field(default_factory=list)
    active: bool = False
    paused: bool = False
    pause_reason: str | None = None
    updated_at: str | None = None

    @property
    def visible(self) -> list[dict]:
        """The items `show`, positions and `run` work on: none once the list is cleared."""
        return self.items if self.active else []


# --- items --------------------------------------------------------------------------


def derived_status(item: dict) -> str:
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


def progress(item: dict) -> tuple[int, int]:
    """(completed subtasks, subtasks)."""
    subtasks = item.get("subtasks") or []
    return sum(1 for s in subtasks if s.get("status") == "completed"), len(subtasks)


def counts(items: Iterable[dict]) -> dict[str, int]:
    found = dict.fromkeys(ITEM_STATUSES, 0)
    for item in items:
        found[derived_status(item)] += 1
    return found


def has_open_items(todo: TodoList) -> bool:
    """Active, with at least one item not completed."""
    return any(derived_status(item) != "completed" for item in todo.visible)


def _new_id(taken: set[str]) -> str:
    while True:
        candidate = os.urandom(4).hex()  # what secrets.token_hex does, without ~4 ms of imports
        if candidate not in taken:
            return candidate


def _ids(items: Iterable[dict]) -> set[str]:
    found: set[str] = set()
    for item in items:
        found.add(str(item.get("id")))
        found.update(str(s.get("id")) for s in item.get("subtasks") or [])
    return found


def _clean_content(text: str) -> str:
    return clean_text(text, what="TODO description", limit=MAX_DESCRIPTION)


def _normal_subtask(raw: Any, number: str) -> dict | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), str):
        return None
    sub = dict(raw)
    sub["id"] = str(sub["id"]) if sub.get("id") is not None else number
    sub["status"] = "completed" if sub.get("status") == "completed" else "pending"
    return sub


def _normal_item(raw: Any, number: int) -> dict | None:
    """An item as stored, tolerant of hand edits: unreadable parts fall back to defaults,
    keys this version does not know are kept."""
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), str):
        return None
    item = dict(raw)
    item["id"] = str(item["id"]) if item.get("id") is not None else str(number)
    if item.get("priority") not in PRIORITIES:
        item["priority"] = DEFAULT_PRIORITY
    raw_subs = item.get("subtasks") if isinstance(item.get("subtasks"), list) else []
    subs = [_normal_subtask(s, f"{number}.{n}") for n, s in enumerate(raw_subs, start=1)]
    item["subtasks"] = [s for s in subs if s is not None]
    if not item["subtasks"]:
        item.pop(OWN_STATUS, None)
    item["status"] = derived_status(item)
    return item


def _item_out(item: dict, *, public: bool = False) -> dict:
    """The item in the documented key order, its status derived; `public` leaves out
    what only the stored record needs."""
    out = {
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


# --- folding and writing ------------------------------------------------------------


def record_id(session: str) -> str:
    return f"{RECORD_TYPE}:{session}"


def from_record(record: Record) -> TodoList:
    session = record.get("session")
    if not isinstance(session, str):
        session = str(record.get("id", "")).partition(":")[2]
    raw_items = record.get("items") if isinstance(record.get("items"), list) else []
    items = [_normal_item(raw, n) for n, raw in enumerate(raw_items, start=1)]
    reason = record.get("pause_reason")
    updated = record.get("updated_at")
    return TodoList(
        session=session,
        items=[i for i in items if i is not None],
        active=record.get("active") is True,
        paused=record.get("paused") is True,
        pause_reason=reason if isinstance(reason, str) else None,
        updated_at=updated if isinstance(updated, str) else None,
    )


def current(fold: Fold, session: str) -> TodoList:
    """The session's list; an empty inactive list when none is recorded."""
    record = fold.typed.get(record_id(session))
    if record is None or record.get("type") != RECORD_TYPE:
        return TodoList(session=session)
    todo = from_record(record)
    todo.session = session
    return todo


def all_lists(fold: Fold) -> list[TodoList]:
    """Every recorded list, in no particular order."""
    return [
        from_record(record)
        for record in fold.typed.values()
        if record.get("type") == RECORD_TYPE
    ]


def to_record(todo: TodoList, updated_at: str) -> Record:
    record: Record = {
        "type": RECORD_TYPE,
        "id": record_id(todo.session),
        "session": todo.session,
        "items": [_item_out(i) for i in todo.items],
        "active": todo.active,
        "paused": todo.paused,
    }
    if todo.pause_reason is not None:
        record["pause_reason"] = todo.pause_reason
    record["updated_at"] = updated_at
    return record


def same(a: TodoList, b: TodoList) -> bool:
    """Equal content (the time of the change aside)."""
    return (
        a.session == b.session
        and a.active == b.active
        and a.paused == b.paused
        and a.pause_reason == b.pause_reason
        and [_item_out(i) for i in a.items] == [_item_out(i) for i in b.items]
    )


@dataclass
class Edit:
    before: TodoList
    after: TodoList
    written: bool


def edit(log: TaskLog, session: str, fn: Callable[[TodoList], TodoList | None]) -> Edit:
    """Locked read-modify-append of one full snapshot of the session's list. `fn` sees
    the newest state; returning None or an equal list writes nothing, raising writes
    nothing either."""
    outcome: list[Edit] = []

    def apply(fold: Fold) -> list[Record]:
        before = current(fold, session)
        after = fn(_copy(before))
        if after is None or same(before, after):
            outcome[:] = [Edit(before, before, written=False)]
            return []
        previous = fold.typed.get(record_id(session))
        stamp = format_ts(next_updated_at(previous))
        after = replace(after, session=session, updated_at=stamp)
        outcome[:] = [Edit(before, after, written=True)]
        return [to_record(after, stamp)]

    log.update(apply)
    return outcome[0]


def change(log: TaskLog, session: str, fn: Callable[[TodoList], TodoList | None]) -> TodoList:
    """Locked read-modify-append of one full todo_list snapshot; the list as it now is."""
    return edit(log, session, fn).after


def _copy(todo: TodoList) -> TodoList:
    items = [dict(i, subtasks=[dict(s) for s in i.get("subtasks") or []]) for i in todo.items]
    return replace(todo, items=items)


# --- positions ----------------------------------------------------------------------


@dataclass(frozen=True)
class Position:
    item: Index
    subtask: Index | None = None
    text: str = ""

    def __str__(self) -> str:
        return self.text or (f"{self.item}" + (f".{self.subtask}" if self.subtask else ""))


def parse_position(text: str) -> Position:
    """`N`, `last`, `N.M` or `N.last`; anything else is an InvalidPosition."""
    match = _POSITION_RE.fullmatch(text) if isinstance(text, str) else None
    if match is None or (match["last"] and (match["sub"] or match["sublast"])):
        raise InvalidPosition(f"Invalid position {text!r}: use {POSITION_FORMS}")
    item: Index = LAST if match["last"] else int(match["item"])
    sub: Index | None = None
    if match["sub"]:
        sub = int(match["sub"])
    elif match["sublast"]:
        sub = LAST
    return Position(item, sub, text)


@dataclass(frozen=True)
class Target:
    """A resolved position: 0-based indices into the visible items."""

    item: int
    subtask: int | None = None

    def label(self) -> str:
        return f"{self.item + 1}" + (f".{self.subtask + 1}" if self.subtask is not None else "")


def _out_of_range(pos: Position, why: str) -> InvalidPosition:
    return InvalidPosition(f"Invalid position {str(pos)!r}: {why}; use {POSITION_FORMS}")


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def resolve(items: Sequence[dict], pos: Position, *, insert: bool) -> Target:
    """Indices for `pos` in `items`. For an insert, N (or M) may be one past the end and
    `last` means after the end; otherwise `last` is the final existing one."""
    n = len(items)
    if pos.subtask is None:
        if insert:
            index = n if pos.item == LAST else pos.item - 1
            if index > n:
                raise _out_of_range(
                    pos, f"the list has {_count(n, 'item')}, so N goes from 1 to {n + 1} "
                    f"({n + 1} appends)",
                )
            return Target(index)
        if n == 0:
            raise _out_of_range(pos, "there are no active TODOs")
        index = n - 1 if pos.item == LAST else pos.item - 1
        if index >= n:
            raise _out_of_range(pos, f"the list has {_count(n, 'item')}, so N goes from 1 to {n}")
        return Target(index)
    # A subtask: its item must exist, whatever the command.
    if n == 0:
        raise _out_of_range(pos, "there are no active TODOs, so no item to hold a subtask")
    index = pos.item - 1 if pos.item != LAST else n - 1
    if index >= n:
        raise _out_of_range(pos, f"there is no item {index + 1} (the list has {_count(n, 'item')})")
    m = len(items[index].get("subtasks") or [])
    if insert:
        sub = m if pos.subtask == LAST else pos.subtask - 1
        if sub > m:
            raise _out_of_range(
                pos, f"item {index + 1} has {_count(m, 'subtask')}, so M goes from 1 to {m + 1} "
                f"({index + 1}.{m + 1} appends)",
            )
        return Target(index, sub)
    if m == 0:
        raise _out_of_range(pos, f"item {index + 1} has no subtasks")
    sub = m - 1 if pos.subtask == LAST else pos.subtask - 1
    if sub >= m:
        raise _out_of_range(
            pos, f"item {index + 1} has {_count(m, 'subtask')}, so M goes from 1 to {m}"
        )
    return Target(index, sub)


def locate(todo: TodoList, text: str, *, insert: bool = False) -> Target:
    return resolve(todo.visible, parse_position(text), insert=insert)


# --- pure changes -------------------------------------------------------------------


def add(
    todo: TodoList, position: str, content: str, *, priority: str | None = None
) -> tuple[TodoList, Target]:
    """Insert at `position` ('last' appends). A cleared list starts afresh."""
    target = locate(todo, position, insert=True)
    text = _clean_content(content)
    items = [dict(i) for i in todo.visible]
    taken = _ids(todo.items)
    if target.subtask is None:
        items.insert(target.item, {
            "id": _new_id(taken),
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
        subs.insert(target.subtask, {"id": _new_id(taken), "content": text, "status": "pending"})
        parent["subtasks"] = subs
        parent["status"] = derived_status(parent)
    return replace(todo, items=items, active=True), target


def delete(todo: TodoList, position: str) -> tuple[TodoList, Target, dict]:
    """Remove an item (with its subtasks) or a subtask; also returns what went."""
    target = locate(todo, position)
    items = [dict(i) for i in todo.visible]
    if target.subtask is None:
        gone = items.pop(target.item)
    else:
        parent = items[target.item]
        subs = list(parent["subtasks"])
        gone = subs.pop(target.subtask)
        parent["subtasks"] = subs
        if subs:
            parent["status"] = derived_status(parent)
        else:
            # The checklist is gone: the item gets back the status it had before it.
            fallback = derived_status({**parent, "subtasks": [gone]})
            own = parent.pop(OWN_STATUS, None)
            parent["status"] = own if own in ITEM_STATUSES else fallback
    return replace(todo, items=items, active=bool(items)), target, gone


def _checklist_refusal(verb: str, target: Target, item: dict) -> InvalidInput:
    n = target.item + 1
    subs = item.get("subtasks") or []
    shown = ", ".join(f"{n}.{m}" for m in range(1, len(subs) + 1))
    return InvalidInput(
        f"Cannot {verb} item {n}: it has a checklist ({shown}) and its status follows it; "
        f"tick its subtasks instead, e.g. 'aidp todo tick {n}.1'"
    )


def tick(todo: TodoList, position: str) -> tuple[TodoList, Target]:
    """Toggle completed ↔ not completed for an item without a checklist, or a subtask."""
    target = locate(todo, position)
    items = [dict(i) for i in todo.visible]
    item = items[target.item]
    if target.subtask is None:
        if item.get("subtasks"):
            raise _checklist_refusal("tick", target, item)
        item["status"] = "pending" if item["status"] == "completed" else "completed"
    else:
        subs = [dict(s) for s in item["subtasks"]]
        sub = subs[target.subtask]
        sub["status"] = "pending" if sub["status"] == "completed" else "completed"
        item["subtasks"] = subs
        item["status"] = derived_status(item)
    return replace(todo, items=items), target


def start(todo: TodoList, position: str) -> tuple[TodoList, Target]:
    """Mark an item in_progress (items with a checklist follow it; subtasks are ticked)."""
    target = locate(todo, position)
    items = [dict(i) for i in todo.visible]
    item = items[target.item]
    if target.subtask is not None:
        raise InvalidInput(
            f"Cannot start subtask {target.label()}: subtasks are a checklist (pending or "
            f"completed); use 'aidp todo tick {target.label()}' or start item {target.item + 1}"
        )
    if item.get("subtasks"):
        raise _checklist_refusal("start", target, item)
    item["status"] = "in_progress"
    return replace(todo, items=items), target


def clear(todo: TodoList) -> TodoList | None:
    """Deactivate: `show` and `run` see nothing; the items stay in the record as history.
    None when there is nothing active."""
    if not todo.active:
        return None
    return replace(todo, active=False)


def pause(todo: TodoList, reason: str) -> TodoList:
    """The agent is blocked: no continuation until the next user prompt."""
    return replace(todo, paused=True, pause_reason=validate_reason(reason))


def load(todo: TodoList, source: TodoList) -> TodoList:
    """Copy `source`'s items (active or cleared) into `todo` and make them active. Loading
    a plan is a fresh start, like a user prompt: a pause is lifted."""
    items = _copy(source).items
    return replace(todo, items=items, active=bool(items), paused=False, pause_reason=None)


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


_PLAN_STATUS = {"pending": "pending", "in_progress": "in_progress", "completed": "completed"}


def set_plan(todo: TodoList, entries: list[dict]) -> TodoList:
    """Replace the items with an agent's own plan: Claude's TodoWrite
    ([{"content", "status", "activeForm"?, "priority"?}]) or Codex's plan
    ([{"step", "status"}]). The list becomes active; an empty plan clears it.
    An entry whose content matches a current item keeps that item's id and priority."""
    if not isinstance(entries, list):
        raise InvalidInput("Invalid plan: expected a list of {content|step, status} entries")
    previous = {i["content"]: i for i in todo.visible}
    taken = _ids(todo.items)
    items: list[dict] = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            raise InvalidInput(
                f"Invalid plan entry {number}: expected an object with content and status"
            )
        raw = entry.get("content", entry.get("step"))
        if not isinstance(raw, str):
            raise InvalidInput(f"Invalid plan entry {number}: it has no content (or step) text")
        text = _clean_content(raw)
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
            item_id = _new_id(taken)
        taken.add(item_id)
        items.append({"id": item_id, "content": text, "status": status, "priority": priority,
                      "subtasks": []})
    if not items:
        return replace(todo, active=False)
    return replace(todo, items=items, active=True)


# --- text ---------------------------------------------------------------------------


def _inert(text: object) -> str:
    from aidp.render import inert

    return inert(text)


def render_show(todo: TodoList) -> str:
    """Exactly what `aidp todo show` prints and the agent sees in `run`."""
    items = todo.visible
    if not items:
        return NO_ACTIVE
    done = sum(1 for i in items if derived_status(i) == "completed")
    lines = [f"TODO list (session: {_inert(todo.session)}) — {done}/{len(items)} completed"]
    for n, item in enumerate(items, start=1):
        status = derived_status(item).upper()
        priority = str(item.get("priority", DEFAULT_PRIORITY)).upper()
        line = f"{n}. [{status}] ({_inert(priority)}) {_inert(item['content'])}"
        finished, total = progress(item)
        if total:
            line += f" ({finished}/{total})"
        lines.append(line)
        for m, sub in enumerate(item.get("subtasks") or [], start=1):
            lines.append(f"   {n}.{m} [{sub['status'].upper()}] {_inert(sub['content'])}")
    if todo.paused:
        reason = f": {_inert(todo.pause_reason)}" if todo.pause_reason else ""
        lines.append(f"Paused{reason}")
    return "\n".join(lines)


def show_json(todo: TodoList) -> dict:
    """`todo show --json`: {"session", "active", "paused", "items"}, statuses derived."""
    items = todo.visible
    return {
        "session": todo.session,
        "active": bool(items),
        "paused": todo.paused,
        "items": [_item_out(i, public=True) for i in items],
    }


@dataclass
class Summary:
    """One line of `todo list`."""

    session: str
    current: bool
    updated_at: str | None
    active: bool
    paused: bool
    items: int
    counts: dict[str, int]
    first: str | None

    def to_json(self) -> dict:
        return {
            "session": self.session,
            "current": self.current,
            "updated_at": self.updated_at,
            "active": self.active,
            "items": self.items,
            "counts": self.counts,
            "first": self.first,
        }


def summaries(fold: Fold, current_session: str) -> list[Summary]:
    """Every recorded list: the current session first, then the newest change first. A
    cleared list reports the contents it had."""
    lists = all_lists(fold)

    def order(todo: TodoList) -> tuple[int, int, str]:
        stamp = ts_of({"updated_at": todo.updated_at}) if todo.updated_at else UNKNOWN_TS
        return (0 if todo.session == current_session else 1, -stamp, todo.session)

    out = []
    for todo in sorted(lists, key=order):
        out.append(Summary(
            session=todo.session,
            current=todo.session == current_session,
            updated_at=todo.updated_at,
            active=todo.active and bool(todo.items),
            paused=todo.paused,
            items=len(todo.items),
            counts=counts(todo.items),
            first=todo.items[0]["content"] if todo.items else None,
        ))
    return out


def pick_source(fold: Fold, ref: str, current_session: str) -> TodoList:
    """The list `todo load REF` means: a number from `todo list`, else a session name."""
    if re.fullmatch(r"[0-9]+", ref):
        found = summaries(fold, current_session)
        number = int(ref)
        if 1 <= number <= len(found):
            return current(fold, found[number - 1].session)
        if not found:
            raise TodoListNotFound(f"No saved TODO list numbered {ref}: there are none yet")
        if record_id(ref) not in fold.typed:
            raise InvalidInput(
                f"Invalid list number {ref}: 'aidp todo list' shows {len(found)}; "
                f"use a number from 1 to {len(found)} or a session name"
            )
    todo = current(fold, ref)
    if todo.updated_at is None:
        raise TodoListNotFound(
            f"No saved TODO list for session {_inert(ref)!r}; see 'aidp todo list'"
        )
    if not todo.items:
        raise TodoListNotFound(
            f"The TODO list of session {_inert(ref)!r} is empty; nothing to load"
        )
    return todo


def relative_age(stamp: str | None, now: int) -> str:
    if not stamp:
        return "never"
    seconds = max(0, now - ts_of({"updated_at": stamp})) // 1_000_000
    if seconds < 60:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return "just now"  # pragma: no cover - the loop always returns


def render_list(found: Sequence[Summary], now: int, *, current_session: str) -> str:
    if not found:
        return f"No TODO lists yet (current session: {_inert(current_session)})"
    blocks = []
    for number, s in enumerate(found, start=1):
        mark = " [CURRENT SESSION]" if s.current else ""
        state = "active" if s.active else ("cleared" if s.items else "empty")
        if s.paused:
            state += ", paused"
        when = relative_age(s.updated_at, now)
        head = f"{number}. {_inert(s.session)}{mark} — {state}, updated {when}"
        by_status = ", ".join(f"{s.counts[k]} {k}" for k in ITEM_STATUSES)
        lines = [head, f"   {_count(s.items, 'item')}: {by_status}"]
        if s.first is not None:
            lines.append(f"   First: {_inert(s.first)}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
