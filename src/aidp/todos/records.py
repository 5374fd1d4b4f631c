"""How a TODO list is stored: its record types, ids and ranks, and the records that
hold a list's items. Pure."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from aidp.core.model import MAX_TS, Record, ts_of
from aidp.todos.items import ITEM_STATUSES, OWN_STATUS, TodoItem, TodoList, item_out

RECORD_TYPE = "todo_list"

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
NODE_KEYS = frozenset(("type", "id", "list", "item", "parent", "rank", "deleted", "updated_at",
                        "subtasks"))
HEAD_KEYS = ("active", "paused", "pause_reason", "owner")


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


def valid_rank(value: object) -> bool:
    """Whether `value` is a rank rank_between could have made (hand edits are not)."""
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


def hex_of(text: str) -> str:
    """12 hex digits naming `text` (a legacy snapshot's generation, the same in every clone)."""
    import zlib

    data = text.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(data):08x}{zlib.crc32(b'aidp' + data):08x}"[:12]


def new_generation() -> str:
    """A new generation id: the items of a fresh start are written under it."""
    return os.urandom(6).hex()


def session_of(record: Record) -> str | None:
    """The session a head or legacy snapshot record belongs to; None for neither."""
    session = record.get("session")
    if isinstance(session, str):
        return session
    rid = record.get("id")
    if record.get("type") == RECORD_TYPE and isinstance(rid, str):
        return rid.partition(":")[2]
    return None


def winner(records: list[Record], keys: Mapping[str, tuple[int, int]] | None = None
            ) -> Record:
    """The record with the greatest (updated_at, id). At the last stamp a write can
    take (model.MAX_TS) no change can step past a record, so there the later line wins
    first (`keys`: the fold's (stamp, line) per id): a list planted at that stamp under
    another writer's id, one that sorts after the user's, would otherwise never change
    again (issue 27)."""
    def order(record: Record) -> tuple[int, int, str]:
        stamp, rid = ts_of(record), str(record.get("id"))
        if stamp == MAX_TS and keys is not None:
            found = keys.get(rid)
            return stamp, found[1] if found else 0, rid
        return stamp, 0, rid

    return max(records, key=order)

def to_record(todo: TodoList, updated_at: str) -> Record:
    """The list as one full `todo_list` snapshot (the format older versions read)."""
    record: Record = {
        "type": RECORD_TYPE,
        "id": record_id(todo.session),
        "session": todo.session,
        "items": [item_out(i) for i in todo.items],
        "active": todo.active,
        "paused": todo.paused,
    }
    if todo.pause_reason is not None:
        record["pause_reason"] = todo.pause_reason
    record["updated_at"] = updated_at
    return record


def node_fields(record: Record) -> dict[str, Any]:
    """An item record's item fields, without its storage keys (NODE_KEYS)."""
    return {k: v for k, v in record.items() if k not in NODE_KEYS}


def head_record(todo: TodoList, gen: str, stamp: str, writer: str) -> Record:
    """The `todo_head` record of `todo` (generation `gen`) by `writer`."""
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


def node_record(gen: str, node: Mapping[str, Any], parent: str | None, rank: str,
                 stamp: str | None, writer: str) -> Record:
    """The `todo_item` record of one item or subtask `node` of generation `gen`."""
    record: Record = {"type": ITEM_TYPE, "id": f"{ITEM_TYPE}:{gen}:{node['id']}@{writer}",
                      "list": gen, "item": node["id"]}
    if parent is not None:
        record["parent"] = parent
    record["rank"] = rank
    for key, value in node.items():
        if key not in NODE_KEYS:
            record[key] = value
    if stamp is not None:
        record["updated_at"] = stamp
    return record


def tombstone(gen: str, node: str, stamp: str, writer: str) -> Record:
    """The record that deletes item `node` of generation `gen`."""
    return {"type": ITEM_TYPE, "id": f"{ITEM_TYPE}:{gen}:{node}@{writer}", "list": gen,
            "item": node, "deleted": True, "updated_at": stamp}


def stored_item(item: TodoItem) -> dict[str, Any]:
    """An item's own fields as its record stores them (no subtasks; status derived)."""
    out = item_out(item)
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


def place_ranks(order: list[str], old: dict[str, str]) -> dict[str, str]:
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


def all_nodes(todo: TodoList, gen: str, stamp: str | None, writer: str) -> dict[str, Record]:
    """Every item and subtask of `todo` as records of generation `gen`, ranked in order."""
    out: dict[str, Record] = {}
    rank: str | None = None
    for item in todo.items:
        rank = rank_between(rank, None)
        node = str(item["id"])
        out.setdefault(node, node_record(gen, {**stored_item(item), "id": node}, None, rank,
                                          stamp, writer))
        sub_rank: str | None = None
        for sub in item.get("subtasks") or []:
            sub_rank = rank_between(sub_rank, None)
            out.setdefault(str(sub["id"]), node_record(gen, {**sub, "id": str(sub["id"])},
                                                        node, sub_rank, stamp, writer))
    return out

def parent_of(record: Record | None) -> str | None:
    """The item id an item record names as its parent (None: a top-level item)."""
    if record is None:
        return None
    parent = record.get("parent")
    return parent if isinstance(parent, str) else None
