"""Folding the TODO records of a fold into lists: one session's list, every list, and
the summaries `todo list` shows. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, cast

from aidp.core.errors import InvalidInput
from aidp.core.model import UNKNOWN_TS, Record, ts_of
from aidp.core.plain import Plain
from aidp.tasklist.log import Fold, FoldKey, parse_line
from aidp.tasklist.person import own_session
from aidp.todos.items import (
    OWN_STATUS,
    TodoItem,
    TodoList,
    TodoListNotFound,
    counts,
    normal_item,
)
from aidp.todos.records import (
    HEAD_TYPE,
    ITEM_TYPE,
    RECORD_TYPE,
    node_fields,
    session_of,
    valid_rank,
    winner,
)


class _Index:
    """The TODO records of a fold, grouped: head candidates by session, item records by
    generation and item id."""

    def __init__(self, fold: Fold) -> None:
        self.heads: dict[str, list[Record]] = {}
        self.nodes: dict[str, dict[str, list[Record]]] = {}
        self.keys: dict[str, FoldKey] = {}  # (stamp, line) per id: ties at the last stamp
        for rid, key, record in fold.typed_records(kinds=(ITEM_TYPE, HEAD_TYPE, RECORD_TYPE)):
            self.keys[rid] = key
            kind = record.get("type")
            if kind == ITEM_TYPE:
                gen, node = record.get("list"), record.get("item")
                if isinstance(gen, str) and isinstance(node, str):
                    self.nodes.setdefault(gen, {}).setdefault(node, []).append(record)
            elif kind in (HEAD_TYPE, RECORD_TYPE):
                session = session_of(record)
                if session is not None:
                    self.heads.setdefault(session, []).append(record)

    def state(self, session: str) -> SessionState:
        candidates = self.heads.get(session)
        if not candidates:
            return SessionState(TodoList(session=session), None, {}, UNKNOWN_TS)
        head = winner(candidates, self.keys)
        newest = max(ts_of(r) for r in candidates)
        if head.get("type") == RECORD_TYPE:
            todo = from_record(head)
            todo.session = session
            todo.epoch = None
            return SessionState(todo, head, {}, newest)
        gen = head.get("list")
        gen = gen if isinstance(gen, str) else ""
        winners = {n: winner(rs, self.keys) for n, rs in self.nodes.get(gen, {}).items()}
        for records in self.nodes.get(gen, {}).values():
            for record in records:
                newest = max(newest, ts_of(record))
        todo = _assemble(session, head, gen, winners)
        latest = winner([head, *winners.values()], self.keys).get("updated_at")
        todo.updated_at = latest if isinstance(latest, str) else None
        return SessionState(todo, head, winners, newest)


def _index(fold: Fold) -> _Index:
    """The fold's TODO-list index, kept with the fold while its typed records are the
    same (a write appends to the fold: the lines move on and the index is built again)."""
    key = fold.lines
    cached = fold.derived.get("todos.state")
    if cached is not None and cached[0] == key:
        return cast("_Index", cached[1])
    found = _Index(fold)
    fold.derived["todos.state"] = (key, found)
    return found


def session_state(fold: Fold, session: str) -> SessionState:
    """`session`'s list as `fold` holds it, with its records (what the writer changes)."""
    return _index(fold).state(session)


class SessionState:
    """A session's list as folded, with what a change needs to know about its records.
    (A plain class: a dataclass costs a millisecond of code generation at import.)"""

    __slots__ = ("head", "newest", "nodes", "todo")

    def __init__(self, todo: TodoList, head: Record | None, nodes: dict[str, Record],
                 newest: int) -> None:
        self.todo = todo
        self.head = head
        self.nodes = nodes  # item id -> its winning record, in the current generation
        self.newest = newest  # the greatest updated_at of the list's records


def _rank_key(record: Record) -> tuple[int, str, str]:
    rank = record.get("rank")
    if valid_rank(rank):
        return (0, rank, str(record.get("item")))  # type: ignore[return-value]
    return (1, "", str(record.get("item")))  # a hand-edited rank: after the others


def _assemble(session: str, head: Record, gen: str, winners: dict[str, Record]) -> TodoList:
    live = {n: r for n, r in winners.items() if r.get("deleted") is not True}
    tops = sorted((r for r in live.values() if not isinstance(r.get("parent"), str)),
                  key=_rank_key)
    children: dict[str, list[Record]] = {}
    for record in live.values():
        parent = record.get("parent")
        if isinstance(parent, str):
            children.setdefault(parent, []).append(record)
    items: list[TodoItem] = []
    ranks: dict[str, str] = {}
    for number, record in enumerate(tops, start=1):
        node = str(record["item"])
        subs: list[dict[str, Any]] = []
        for sub in sorted(children.get(node, []), key=_rank_key):
            subs.append({"id": sub["item"], **node_fields(sub)})
            if valid_rank(sub.get("rank")):
                ranks[sub["item"]] = sub["rank"]
        raw: dict[str, Any] = {"id": node, **node_fields(record), "subtasks": subs}
        if subs:  # the stored status is the one it gets back without its checklist
            raw[OWN_STATUS] = raw.get("status")
        item = normal_item(raw, number)
        if item is None:
            continue
        items.append(item)
        if valid_rank(record.get("rank")):
            ranks[node] = record["rank"]
    reason = head.get("pause_reason")
    owner = head.get("owner")
    updated = head.get("updated_at")
    return TodoList(
        session=session,
        items=items,
        active=head.get("active") is True,
        paused=head.get("paused") is True,
        pause_reason=reason if isinstance(reason, str) else None,
        updated_at=updated if isinstance(updated, str) else None,
        owner=owner if isinstance(owner, str) else None,
        epoch=gen,
        ranks=ranks,
    )


def from_record(record: Record) -> TodoList:
    """A list from one full snapshot (a `todo_list` record, as older versions wrote)."""
    session = record.get("session")
    if not isinstance(session, str):
        session = str(record.get("id", "")).partition(":")[2]
    raw_items = record["items"] if isinstance(record.get("items"), list) else []
    items = [normal_item(raw, n) for n, raw in enumerate(raw_items, start=1)]
    reason = record.get("pause_reason")
    updated = record.get("updated_at")
    owner = record.get("owner")
    return TodoList(
        session=session,
        items=[i for i in items if i is not None],
        active=record.get("active") is True,
        paused=record.get("paused") is True,
        pause_reason=reason if isinstance(reason, str) else None,
        updated_at=updated if isinstance(updated, str) else None,
        owner=owner if isinstance(owner, str) else None,
    )


def current(fold: Fold, session: str) -> TodoList:
    """The session's list; an empty inactive list when none is recorded."""
    return _index(fold).state(session).todo


def exists(fold: Fold, session: str) -> bool:
    """Whether anything was ever recorded for the session's list."""
    return session in _index(fold).heads


def personal_session(fold: Fold, branch: str, who: str) -> str:
    """The default session of person `who` on `branch`: `<branch>@<who>`, their own list,
    unless they already have a list under the bare branch name (from before lists were
    per person): a list there that records them as its owner, or no owner at all, keeps
    working for them (and records them as its owner on its next change)."""
    personal = own_session(branch, who)
    index = _index(fold)
    if personal in index.heads or branch not in index.heads:
        return personal
    owner = index.state(branch).todo.owner
    return branch if owner is None or owner == who else personal


def all_lists(fold: Fold) -> list[TodoList]:
    """Every recorded list, in no particular order."""
    index = _index(fold)
    return [index.state(session).todo for session in index.heads]


def past_lists(fold: Fold, data: bytes) -> list[TodoList]:
    """The lists no session shows any more, newest first: every generation of items a
    session's head ever named (a clear then an add, a load, a new plan each start one)
    other than the one it names now, that still has items. The fold keeps only each
    writer's newest head, so the heads come from the file's bytes (`data`); each list's
    `epoch` is its id for `todo load`."""
    index = _index(fold)
    shown = {session: index.state(session).todo.epoch for session in index.heads}
    found: dict[str, str] = {}  # generation -> its session
    for raw in data.split(b"\n"):
        if b"todo_head" not in raw:
            continue
        record = parse_line(raw)
        if record is None or record.get("type") != HEAD_TYPE:
            continue
        session, gen = session_of(record), record.get("list")
        if session is not None and isinstance(gen, str) and gen != shown.get(session):
            found.setdefault(gen, session)
    out = []
    for gen, session in found.items():
        winners = {n: winner(rs, index.keys) for n, rs in index.nodes.get(gen, {}).items()}
        todo = _assemble(session, {}, gen, winners)
        todo.owner = index.state(session).todo.owner  # its session's person
        if todo.items:
            todo.updated_at = winner(list(winners.values()), index.keys).get("updated_at")
            out.append(todo)
    out.sort(key=lambda t: (-_stamp(t), t.session, t.epoch or ""))
    return out


def _stamp(todo: TodoList) -> int:
    return ts_of({"updated_at": todo.updated_at}) if todo.updated_at else UNKNOWN_TS

class Summary(Plain):
    """One line of `todo list`; `list`: an earlier list's id (`todo list --all`)."""

    __slots__ = _fields = ("session", "current", "updated_at", "active", "paused", "items",
                           "counts", "first", "owner", "list")

    def __init__(self, session: str, current: bool, updated_at: str | None, active: bool,
                 paused: bool, items: int, counts: dict[str, int], first: str | None,
                 owner: str | None = None, list: str | None = None) -> None:
        self.session = session
        self.current = current
        self.updated_at = updated_at
        self.active = active
        self.paused = paused
        self.items = items
        self.counts = counts
        self.first = first
        self.owner = owner
        self.list = list

    def to_json(self) -> dict[str, Any]:
        earlier = {"list": self.list} if self.list is not None else {}
        return {
            "session": self.session,
            "current": self.current,
            "updated_at": self.updated_at,
            "active": self.active,
            "items": self.items,
            "counts": self.counts,
            "first": self.first,
            "owner": self.owner,
            **earlier,
        }


def summaries(fold: Fold, current_session: str,
              past: Sequence[TodoList] = ()) -> list[Summary]:
    """Every recorded list: the current session first, then the newest change first. A
    cleared list reports the contents it had. Then the `past` lists (past_lists), each
    with its id."""
    lists = all_lists(fold)

    def order(todo: TodoList) -> tuple[int, int, str]:
        return (0 if todo.session == current_session else 1, -_stamp(todo), todo.session)

    out = []
    shown = [(todo, None) for todo in sorted(lists, key=order)]
    for todo, earlier in [*shown, *((todo, todo.epoch) for todo in past)]:
        out.append(Summary(
            session=todo.session,
            current=todo.session == current_session,
            updated_at=todo.updated_at,
            active=todo.active and bool(todo.items),
            paused=todo.paused,
            items=len(todo.items),
            counts=counts(todo.items),
            first=todo.items[0]["content"] if todo.items else None,
            owner=todo.owner,
            list=earlier,
        ))
    return out


def pick_source(fold: Fold, ref: str, current_session: str,
                past: Callable[[], list[TodoList]] = list) -> TodoList:
    """The list `todo load REF` means: a number from `todo list` (or `todo list --all`,
    whose numbers go on after the others), a session name, else an earlier list's id.
    `past` gives past_lists when asked."""
    from aidp.core.terminal import inert

    if re.fullmatch(r"[0-9]+", ref):
        found = summaries(fold, current_session)
        number = int(ref)
        if 1 <= number <= len(found):
            return current(fold, found[number - 1].session)
        earlier = past() if number > len(found) else []
        if len(found) < number <= len(found) + len(earlier):
            return earlier[number - len(found) - 1]
        where = "'aidp todo list --all'" if earlier else "'aidp todo list'"
        found += summaries(fold, current_session, earlier)[len(found):]
        if not found:
            # Out of range like any other number (docs/todo.md: exit 2).
            raise InvalidInput(f"Invalid list number {ref}: there are no saved TODO lists "
                               "yet; see 'aidp todo list'")
        if not exists(fold, ref):
            raise InvalidInput(
                f"Invalid list number {ref}: {where} shows {len(found)}; "
                f"use a number from 1 to {len(found)} or a session name"
            )
    todo = current(fold, ref)
    if todo.updated_at is None and re.fullmatch(r"[0-9a-z]{12}", ref):
        todo = next((t for t in past() if t.epoch == ref), todo)
    if todo.updated_at is None:
        raise TodoListNotFound(
            f"No saved TODO list for session '{inert(ref)}'; see 'aidp todo list'"
        )
    if not todo.items:
        raise TodoListNotFound(
            f"The TODO list of session '{inert(ref)}' is empty; nothing to load"
        )
    return todo
