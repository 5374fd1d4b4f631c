"""Session TODO lists: the agent's working plan, one list per session.

A list is stored as small records in the event log, one per changed item (see
"storage" below and docs/file-format.md). Everything here is pure except
`change`/`edit`, which do the read-modify-append under the log's exclusive lock.

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
    now_micros,
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
    # Whose list it is (a git identity), recorded with the list's state.
    owner: str | None = field(default=None, compare=False)
    # Storage details: which generation of the session's items this is, and each item's
    # place among its siblings (see "storage" below). Not part of the list's content.
    epoch: str | None = field(default=None, compare=False, repr=False)
    ranks: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

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


# --- storage: one record per changed item ----------------------------------------------
#
# A session's list is folded from small records (docs/file-format.md, "TODO lists"):
#
# - `todo_head` {"session", "list", "active", "paused", "pause_reason"?, "owner"?}: the
#   list's state, and which generation (`list`, an id) of items is current. A fresh
#   start (an add after a clear, a load, an agent's new plan on a cleared list) begins a
#   new generation, so the old items stay as history without a record per item.
# - `todo_item` {"list", "item", "parent"?, "rank", "content", "status", …}: one item or
#   subtask of a generation, or {"deleted": true}. Siblings are ordered by `rank`, a
#   fraction in base 36 ("i" < "r" < "ri"), then by item id: an insert writes one record
#   whatever the list's size, and concurrent inserts on two clones both keep a place.
# - `todo_list`: the full snapshots older versions wrote. Still read: when it is the
#   newest state of a session, its items are the list; the next change writes them out
#   as items of a generation named after the snapshot, the same name in every clone.
#
# Every head and item record is written under an id that also names the writer (a hash
# of the host and the project's path), so two clones never write the same id; of a
# node's records (one per writer) the one with the greatest (updated_at, id) wins. The
# fold of a list is thus a function of the set of lines: clones that merged the same
# lines, in any order, see the same list, and a tie on updated_at is broken by the
# writer, not by where git put the lines.

HEAD_TYPE = "todo_head"
ITEM_TYPE = "todo_item"
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_RANK_RE = re.compile(r"[0-9a-z]*[1-9a-z]")
# Keys of an item record that are storage, not part of the item.
_NODE_KEYS = frozenset(("type", "id", "list", "item", "parent", "rank", "deleted", "updated_at",
                        "subtasks"))
_HEAD_KEYS = ("active", "paused", "pause_reason", "owner")


def record_id(session: str) -> str:
    """The id of the session's legacy snapshot record."""
    return f"{RECORD_TYPE}:{session}"


def rank_between(low: str | None, high: str | None) -> str:
    """A rank strictly between `low` and `high` (None: the start, the end), as a base-36
    fraction without a trailing zero. Appends grow it by a digit every ~35 items."""
    low = low or ""
    out: list[str] = []
    bounded = high is not None
    at = 0
    while True:
        a = _DIGITS.index(low[at]) if at < len(low) else 0
        b = 36
        if bounded and high is not None:
            b = _DIGITS.index(high[at]) if at < len(high) else 0
            if b < a:  # not below `high` (only a hand-edited rank does that): go above `low`
                bounded, b = False, 36
        if b - a >= 2:
            out.append(_DIGITS[(a + b) // 2 if bounded else a + 1])
            return "".join(out)
        out.append(_DIGITS[a])
        if b - a == 1:
            bounded = False  # below `high` from here on: anything longer than `low` fits
        at += 1


def _valid_rank(value: object) -> bool:
    return isinstance(value, str) and _RANK_RE.fullmatch(value) is not None


def writer_id(root: object) -> str:
    """This clone's writer name: 8 hex digits of a hash of the host and the project path.
    Stable, private, and different for every clone a person has."""
    import zlib

    try:
        host = os.uname().nodename
    except AttributeError:  # pragma: no cover - not on POSIX
        host = ""
    text = host + "\0" + str(root)
    return f"{zlib.crc32(text.encode('utf-8', 'surrogatepass')):08x}"


def _hex_of(text: str) -> str:
    import zlib

    data = text.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(data):08x}{zlib.crc32(b'aidp' + data):08x}"[:12]


def _new_generation() -> str:
    return os.urandom(6).hex()


def _session_of(record: Record) -> str | None:
    session = record.get("session")
    if isinstance(session, str):
        return session
    rid = record.get("id")
    if record.get("type") == RECORD_TYPE and isinstance(rid, str):
        return rid.partition(":")[2]
    return None


def _winner(records: list[Record]) -> Record:
    return max(records, key=lambda r: (ts_of(r), str(r.get("id"))))


class _Index:
    """The TODO records of a fold, grouped: head candidates by session, item records by
    generation and item id."""

    def __init__(self, fold: Fold) -> None:
        self.heads: dict[str, list[Record]] = {}
        self.nodes: dict[str, dict[str, list[Record]]] = {}
        for record in fold.typed.values():
            kind = record.get("type")
            if kind == ITEM_TYPE:
                gen, node = record.get("list"), record.get("item")
                if isinstance(gen, str) and isinstance(node, str):
                    self.nodes.setdefault(gen, {}).setdefault(node, []).append(record)
            elif kind in (HEAD_TYPE, RECORD_TYPE):
                session = _session_of(record)
                if session is not None:
                    self.heads.setdefault(session, []).append(record)

    def state(self, session: str) -> _State:
        candidates = self.heads.get(session)
        if not candidates:
            return _State(TodoList(session=session), None, {}, UNKNOWN_TS)
        head = _winner(candidates)
        newest = max(ts_of(r) for r in candidates)
        if head.get("type") == RECORD_TYPE:
            todo = from_record(head)
            todo.session = session
            todo.epoch = None
            return _State(todo, head, {}, newest)
        gen = head.get("list")
        gen = gen if isinstance(gen, str) else ""
        winners = {n: _winner(rs) for n, rs in self.nodes.get(gen, {}).items()}
        for records in self.nodes.get(gen, {}).values():
            for record in records:
                newest = max(newest, ts_of(record))
        todo = _assemble(session, head, gen, winners)
        latest = _winner([head, *winners.values()]).get("updated_at")
        todo.updated_at = latest if isinstance(latest, str) else None
        return _State(todo, head, winners, newest)


def _index(fold: Fold) -> _Index:
    key = (fold.lines, len(fold.typed), id(fold.typed))
    cached = getattr(fold, "_todo_index", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    found = _Index(fold)
    try:
        fold._todo_index = (key, found)  # type: ignore[attr-defined]
    except AttributeError:  # pragma: no cover - a fold without a __dict__
        pass
    return found


class _State:
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
    if _valid_rank(rank):
        return (0, rank, str(record.get("item")))  # type: ignore[return-value]
    return (1, "", str(record.get("item")))  # a hand-edited rank: after the others


def _node_fields(record: Record) -> dict:
    return {k: v for k, v in record.items() if k not in _NODE_KEYS}


def _assemble(session: str, head: Record, gen: str, winners: dict[str, Record]) -> TodoList:
    live = {n: r for n, r in winners.items() if r.get("deleted") is not True}
    tops = sorted((r for r in live.values() if not isinstance(r.get("parent"), str)),
                  key=_rank_key)
    children: dict[str, list[Record]] = {}
    for record in live.values():
        parent = record.get("parent")
        if isinstance(parent, str):
            children.setdefault(parent, []).append(record)
    items: list[dict] = []
    ranks: dict[str, str] = {}
    for number, record in enumerate(tops, start=1):
        node = str(record["item"])
        subs = []
        for sub in sorted(children.get(node, []), key=_rank_key):
            subs.append({"id": sub["item"], **_node_fields(sub)})
            if _valid_rank(sub.get("rank")):
                ranks[sub["item"]] = sub["rank"]
        raw = {"id": node, **_node_fields(record), "subtasks": subs}
        if subs:  # the stored status is the one it gets back without its checklist
            raw[OWN_STATUS] = raw.get("status")
        item = _normal_item(raw, number)
        if item is None:
            continue
        items.append(item)
        if _valid_rank(record.get("rank")):
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
    raw_items = record.get("items") if isinstance(record.get("items"), list) else []
    items = [_normal_item(raw, n) for n, raw in enumerate(raw_items, start=1)]
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
    personal = f"{branch}@{who}"
    index = _index(fold)
    if personal in index.heads or branch not in index.heads:
        return personal
    owner = index.state(branch).todo.owner
    return branch if owner is None or owner == who else personal


def all_lists(fold: Fold) -> list[TodoList]:
    """Every recorded list, in no particular order."""
    index = _index(fold)
    return [index.state(session).todo for session in index.heads]


def to_record(todo: TodoList, updated_at: str) -> Record:
    """The list as one full `todo_list` snapshot (the format older versions read)."""
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


def _head_record(todo: TodoList, gen: str, stamp: str, writer: str) -> Record:
    record: Record = {
        "type": HEAD_TYPE,
        "id": f"{HEAD_TYPE}:{todo.session}@{writer}",
        "session": todo.session,
        "list": gen,
        "active": todo.active,
        "paused": todo.paused,
    }
    if todo.pause_reason is not None:
        record["pause_reason"] = todo.pause_reason
    if todo.owner is not None:
        record["owner"] = todo.owner
    record["updated_at"] = stamp
    return record


def _node_record(gen: str, node: dict, parent: str | None, rank: str, stamp: str | None,
                 writer: str) -> Record:
    record: Record = {"type": ITEM_TYPE, "id": f"{ITEM_TYPE}:{gen}:{node['id']}@{writer}",
                      "list": gen, "item": node["id"]}
    if parent is not None:
        record["parent"] = parent
    record["rank"] = rank
    for key, value in node.items():
        if key not in _NODE_KEYS:
            record[key] = value
    if stamp is not None:
        record["updated_at"] = stamp
    return record


def _tombstone(gen: str, node: str, stamp: str, writer: str) -> Record:
    return {"type": ITEM_TYPE, "id": f"{ITEM_TYPE}:{gen}:{node}@{writer}", "list": gen,
            "item": node, "deleted": True, "updated_at": stamp}


def _stored(item: dict) -> dict:
    """An item's own fields as its record stores them (no subtasks; status derived)."""
    out = _item_out(item)
    if out.pop("subtasks"):
        # A checklist decides the status: store the item's own one instead, so that
        # ticking a subtask writes the subtask alone.
        own = out.pop(OWN_STATUS, None)
        out["status"] = own if own in ITEM_STATUSES else "pending"
    return out


def _kept_ranks(order: list[str], old: dict[str, str]) -> set[str]:
    """The nodes whose old ranks already increase along `order` (a longest increasing
    subsequence): they keep their ranks, only the others are written again."""
    import bisect

    seq = [(old[n], n) for n in order if n in old]
    tails: list[str] = []
    tail_at: list[int] = []
    back: list[int] = []
    for i, (rank, _n) in enumerate(seq):
        at = bisect.bisect_left(tails, rank)
        if at == len(tails):
            tails.append(rank)
            tail_at.append(i)
        else:
            tails[at] = rank
            tail_at[at] = i
        back.append(tail_at[at - 1] if at else -1)
    kept: set[str] = set()
    i = tail_at[-1] if tail_at else -1
    while i >= 0:
        kept.add(seq[i][1])
        i = back[i]
    return kept


def _place(order: list[str], old: dict[str, str]) -> dict[str, str]:
    """Ranks for `order`: kept where they already increase, new ones between them."""
    kept = _kept_ranks(order, old)
    ranks: dict[str, str] = {}
    low: str | None = None
    for at, node in enumerate(order):
        if node in kept:
            ranks[node] = old[node]
            low = old[node]
            continue
        high = next((old[n] for n in order[at + 1:] if n in kept), None)
        low = ranks[node] = rank_between(low, high)
    return ranks


def _all_nodes(todo: TodoList, gen: str, stamp: str | None, writer: str) -> dict[str, Record]:
    """Every item and subtask of `todo` as records of generation `gen`, ranked in order."""
    out: dict[str, Record] = {}
    rank: str | None = None
    for item in todo.items:
        rank = rank_between(rank, None)
        node = str(item["id"])
        out.setdefault(node, _node_record(gen, {**_stored(item), "id": node}, None, rank,
                                          stamp, writer))
        sub_rank: str | None = None
        for sub in item.get("subtasks") or []:
            sub_rank = rank_between(sub_rank, None)
            out.setdefault(str(sub["id"]), _node_record(gen, {**sub, "id": str(sub["id"])},
                                                        node, sub_rank, stamp, writer))
    return out


def _changes(state: _State, after: TodoList, stamp: str, writer: str) -> tuple[list[Record], str]:
    """The records that take the stored list from `state` to `after`, and the generation."""
    before = state.todo
    legacy = state.head is not None and state.head.get("type") == RECORD_TYPE
    fresh = (
        state.head is None
        or after.epoch != before.epoch
        or (after.active and not before.active)
    )
    base: dict[str, Record] = {}
    if fresh:
        gen = after.epoch if after.epoch and after.epoch != before.epoch else _new_generation()
        old_nodes: dict[str, Record] = {}
        head_changed = True
    elif legacy and state.head is not None:
        # The first change to a list that an older version wrote as a snapshot: its items
        # become a generation named after the snapshot, stamped with the snapshot's time,
        # so every clone that upgrades writes the same thing and real changes win over it.
        then = state.head.get("updated_at")
        gen = "s" + _hex_of(f"{before.session}\0{then}")[:11]
        base = old_nodes = _all_nodes(before, gen, then if isinstance(then, str) else None,
                                      writer)
        head_changed = True
    else:
        gen = before.epoch or _new_generation()
        old_nodes = state.nodes
        head_changed = any(getattr(before, k) != getattr(after, k) for k in _HEAD_KEYS)
    old_ranks = {n: r["rank"] for n, r in old_nodes.items() if _valid_rank(r.get("rank"))}
    records: list[Record] = []
    if head_changed:
        records.append(_head_record(after, gen, stamp, writer))
    written: dict[str, Record] = {}
    seen: set[str] = set()
    groups = [(None, [str(i["id"]) for i in after.items])]
    groups += [(str(i["id"]), [str(s["id"]) for s in i.get("subtasks") or []])
               for i in after.items]
    by_id: dict[str, dict] = {}
    for item in after.items:
        by_id.setdefault(str(item["id"]), _stored(item))
        for sub in item.get("subtasks") or []:
            by_id.setdefault(str(sub["id"]), dict(sub))
    for parent, order in groups:
        siblings = {n: old_ranks[n] for n in order if n in old_ranks
                    and _parent_of(old_nodes.get(n)) == parent}
        for node, rank in _place(order, siblings).items():
            if node in seen:
                continue  # an id twice in a hand-made list: the first place counts
            seen.add(node)
            fields = {k: v for k, v in by_id[node].items() if k not in _NODE_KEYS}
            previous = old_nodes.get(node)
            if (previous is not None and previous.get("deleted") is not True
                    and _parent_of(previous) == parent and previous.get("rank") == rank
                    and _node_fields(previous) == fields):
                continue
            written[node] = _node_record(gen, {**fields, "id": node}, parent, rank, stamp,
                                         writer)
    for node, previous in old_nodes.items():
        if node not in seen and previous.get("deleted") is not True:
            written[node] = _tombstone(gen, node, stamp, writer)
    records += [record for node, record in base.items() if node not in written]
    records += written.values()
    return records, gen


def _parent_of(record: Record | None) -> str | None:
    if record is None:
        return None
    parent = record.get("parent")
    return parent if isinstance(parent, str) else None


@dataclass
class Edit:
    before: TodoList
    after: TodoList
    written: bool


def edit(log: TaskLog, session: str, fn: Callable[[TodoList], TodoList | None]) -> Edit:
    """Locked read-modify-append of the session's list: `fn` sees the newest state and
    returns the new one; only what changed is appended (a tick: one small record).
    Returning None or an equal list writes nothing, raising writes nothing either."""
    outcome: list[Edit] = []
    writer = writer_id(log.root)

    def apply(fold: Fold) -> list[Record]:
        state = _index(fold).state(session)
        before = state.todo
        after = fn(_copy(before))
        if after is None or same(before, after):
            outcome[:] = [Edit(before, before, written=False)]
            return []
        stamp = format_ts(max(now_micros(), state.newest + 1))
        if after.owner is None:
            after = replace(after, owner=before.owner or _owner_for(log, session))
        records, gen = _changes(state, replace(after, session=session), stamp, writer)
        after = replace(after, session=session, updated_at=stamp, epoch=gen)
        outcome[:] = [Edit(before, after, written=True)]
        return records

    log.update(apply)
    return outcome[0]


def _owner_for(log: TaskLog, session: str) -> str | None:
    """Who a list belongs to, recorded when its head is first written: the person's git
    identity (see aidp.git)."""
    from aidp.git import identity

    return identity(log.root)


def change(log: TaskLog, session: str, fn: Callable[[TodoList], TodoList | None]) -> TodoList:
    """Locked read-modify-append of the session's list; the list as it now is."""
    return edit(log, session, fn).after


def _copy(todo: TodoList) -> TodoList:
    items = [dict(i, subtasks=[dict(s) for s in i.get("subtasks") or []]) for i in todo.items]
    return replace(todo, items=items, ranks=dict(todo.ranks))


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
    return replace(todo, items=items, active=bool(items), paused=False, pause_reason=None,
                   epoch=_new_generation())


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
    owner: str | None = None

    def to_json(self) -> dict:
        return {
            "session": self.session,
            "current": self.current,
            "updated_at": self.updated_at,
            "active": self.active,
            "items": self.items,
            "counts": self.counts,
            "first": self.first,
            "owner": self.owner,
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
            owner=todo.owner,
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
        if not exists(fold, ref):
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
        if s.owner is not None and not s.session.endswith(f"@{s.owner}"):
            lines.append(f"   Owner: {_inert(s.owner)}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
