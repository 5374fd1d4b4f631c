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


class Snapshot:
    """One project's board, encoded: `cards` (id -> the card's JSON bytes), `meta` (the
    summary: counts, damage, the person lane's paused lists and decisions; JSON bytes),
    and the earliest lease end among its live claims (`next_stale`, µs; None: none)."""

    __slots__ = ("cards", "meta", "next_stale")

    def __init__(self, cards: dict[str, bytes], meta: bytes, next_stale: int | None) -> None:
        self.cards = cards
        self.meta = meta
        self.next_stale = next_stale


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
    return Snapshot(cards, orjson.dumps(meta), next_stale)


def full(snap: Snapshot) -> bytes:
    """The whole board of one project: {"meta": …, "cards": […]}."""
    return b'{"meta":' + snap.meta + b',"cards":[' + b",".join(snap.cards.values()) + b"]}"


def patch(before: Snapshot, after: Snapshot) -> bytes | None:
    """What changed from `before` to `after`: {"meta", "upsert": [cards], "remove":
    [ids]}; None when nothing did."""
    upsert = [data for tid, data in after.cards.items() if before.cards.get(tid) != data]
    remove = [tid for tid in before.cards if tid not in after.cards]
    if not upsert and not remove and before.meta == after.meta:
        return None
    return (b'{"meta":' + after.meta + b',"upsert":[' + b",".join(upsert) + b'],"remove":'
            + orjson.dumps(remove) + b"}")
