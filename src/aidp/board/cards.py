"""What the page gets: one project's board (aidp.app.overview) as JSON cards and a
summary, and the patch between two of them (only the cards that changed travel).

A card is the task as shown (its record, type, close reason, holder, lease; its links
are in the detail), with the board's marks: `ready`, `waits` (the open tasks it waits
on), `plan` (its holder session's progress and current item), `decision` (a question
for a person), `person` (it waits on one), and `notes` as a count (their text is in
the detail).
Nothing here is markup: the page sets every value as text.
"""

from __future__ import annotations

from typing import Any

import orjson

from aidp.app.overview import Overview, Plan
from aidp.core.model import Record

# The task record's own keys the page shows (a newer version's keys are left out).
_KEPT = ("id", "description", "status", "priority", "tags", "created_at", "updated_at",
         "started_at", "completed_at", "abandoned_at", "abandoned_reason", "session",
         "task_type", "close_reason", "assignee", "claimed_at", "lease_until", "stale")


def plan_json(plan: Plan) -> dict[str, Any]:
    return {"session": plan.session, "done": plan.done, "total": plan.total,
            "current": plan.current, "paused": plan.paused, "reason": plan.reason,
            "owner": plan.owner, "updated_at": plan.updated_at}


def card(task: Record, view: Overview, ready: set[str], person: set[str],
         decisions: set[str]) -> dict[str, Any]:
    out = {key: task[key] for key in _KEPT if key in task}
    tid = task["id"]
    notes = task.get("notes")
    if notes:
        out["notes"] = len(notes)
    if tid in ready:
        out["ready"] = True
    waits = view.waiting_on.get(tid)
    if waits:
        out["waits"] = waits
    plan = view.plans.get(tid)
    if plan is not None:
        out["plan"] = plan_json(plan)
    if tid in person:
        out["person"] = True
    if tid in decisions:
        out["decision"] = True
    return out


FIRST = 200  # cards of each column a page draws before "Show more": sent first


class Snapshot:
    """One project's board, encoded: `cards` (id -> the card's JSON bytes), `meta` (the
    summary: counts, damage, the person lane's paused lists and decisions; JSON bytes),
    the earliest lease end among its live claims (`next_stale`, µs; None: none), and
    `first`: the ids of the cards each column shows first, unfiltered (a new page gets
    them before the rest: its first cards come sooner)."""

    __slots__ = ("cards", "first", "meta", "next_stale")

    def __init__(self, cards: dict[str, bytes], meta: bytes, next_stale: int | None,
                 first: set[str] | None = None) -> None:
        self.cards = cards
        self.meta = meta
        self.next_stale = next_stale
        self.first = set(cards) if first is None else first


_RANK = {"high": 0, "medium": 1, "low": 2}


def _first(view: Overview, ready: set[str]) -> set[str]:
    """The ids the page's columns show first, in the page's own order (board.js,
    `sorted`): pending by priority, ready first, oldest first; in progress stale
    first, by priority, the longest held first; the closed ones all (the recent ones)."""
    from aidp.core.model import ts_of

    def rank(task: Record) -> int:
        return _RANK.get(str(task.get("priority")), 1)

    pending = [t for t in view.tasks if t.get("status") == "pending"]
    pending.sort(key=lambda t: (rank(t), t["id"] not in ready, ts_of(t, "created_at")))
    held = [t for t in view.tasks if t.get("status") == "in_progress"]
    held.sort(key=lambda t: (not t.get("stale"), rank(t),
                             ts_of(t, "claimed_at" if "claimed_at" in t else "started_at")))
    others = [t for t in view.tasks if t.get("status") not in ("pending", "in_progress")]
    return {t["id"] for t in (*pending[:FIRST], *held[:FIRST], *others)}


def snapshot(view: Overview, *, repo: str, name: str, error: str | None = None) -> Snapshot:
    """The board of `view` for the project at `repo` (its absolute root) named `name`."""
    from aidp.core.model import ts_of

    ready = set(view.ready)
    decisions = set(view.decisions)
    person = {tid for tid, waits in view.waiting_on.items() if decisions.intersection(waits)}
    cards: dict[str, bytes] = {}
    next_stale: int | None = None
    for task in view.tasks:
        cards[task["id"]] = orjson.dumps(card(task, view, ready, person, decisions))
        until = task.get("lease_until")
        if isinstance(until, str) and not task.get("stale"):
            at = ts_of({"updated_at": until})
            next_stale = at if next_stale is None else min(next_stale, at)
    meta = {"repo": repo, "name": name, "counts": view.counts, "damaged": view.damaged,
            "paused": [plan_json(p) for p in view.paused], "decisions": view.decisions,
            "error": error}
    return Snapshot(cards, orjson.dumps(meta), next_stale, _first(view, ready))


def full(snap: Snapshot, part: str = "all") -> bytes:
    """The board of one project, {"meta": …, "cards": […]}: every card (`part` "all"),
    the ones its columns show first ("first"), or the others ("rest")."""
    if part == "all":
        chosen = list(snap.cards.values())
    else:
        first = part == "first"
        chosen = [data for tid, data in snap.cards.items() if (tid in snap.first) == first]
    return b'{"meta":' + snap.meta + b',"cards":[' + b",".join(chosen) + b"]}"


def patch(before: Snapshot, after: Snapshot) -> bytes | None:
    """What changed from `before` to `after`: {"meta", "upsert": [cards], "remove":
    [ids]}; None when nothing did."""
    upsert = [data for tid, data in after.cards.items() if before.cards.get(tid) != data]
    remove = [tid for tid in before.cards if tid not in after.cards]
    if not upsert and not remove and before.meta == after.meta:
        return None
    return (b'{"meta":' + after.meta + b',"upsert":[' + b",".join(upsert) + b'],"remove":'
            + orjson.dumps(remove) + b"}")
