"""What `aidp sync` tells the person who pulled, beyond the same-field conflicts of a
merge (aidp.git.changes.overwritten): which of two claims on one task won — the winner
that it holds the task, the loser who does (docs/guide.md, "Leases") — whether the pull
was a merge or a fast-forward; and, after a fast-forward, the values someone else set
over values this person had set (a merge names those as conflicts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aidp.core.model import Record

Author = Callable[[bytes, str], str]  # (a line, "ours"/"theirs") -> "Name <email>" or ""


def _lines(data: bytes) -> list[bytes]:
    return [raw for raw in data.split(b"\n") if raw.strip()]


def _narrowed(data: bytes, ids: set[bytes]) -> bytes:
    """The lines of `data` that name one of `ids` (JSON strings): all a fold of those
    tasks needs (their records and their queue records)."""
    return b"\n".join(raw for raw in data.split(b"\n") if any(t in raw for t in ids)) + b"\n"


def claim_outcomes(ours: bytes, merged: bytes, me: str, author: Author
                   ) -> list[dict[str, Any]]:
    """For each task in progress that `me` held in `ours` and whose claims the pull
    changed (another clone's claim came in): {"id", "description", "holder" (who holds it
    now), "won" (whether that is `me`), "others" (the other claimers, when `me` won),
    "by" (the commit author of the claim that holds it, or of the first other one),
    "taken_over" (the holder took it over once `me`'s lease ran out)}."""
    import orjson

    from aidp.backlog import queue
    from aidp.tasklist.fields import fold_bytes
    from aidp.tasklist.line import parse_line

    have = set(_lines(ours))
    came: dict[str, list[tuple[Record, bytes]]] = {}
    for raw in _lines(merged):
        if raw in have or b'"claim"' not in raw:
            continue
        record = parse_line(raw)
        if record is not None and record.get("type") == queue.CLAIM \
                and isinstance(record.get("task"), str):
            came.setdefault(record["task"], []).append((record, raw))
    if not came:
        return []
    ids = {orjson.dumps(tid) for tid in came}
    before, after = fold_bytes(_narrowed(ours, ids)), fold_bytes(_narrowed(merged, ids))
    out: list[dict[str, Any]] = []
    for tid, arrived in came.items():
        task, was = after.tasks.get(tid), before.tasks.get(tid)
        if task is None or was is None or task.get("status") != "in_progress":
            continue
        held = queue.state(before, about=tid, own=True).holder(was)
        if held is None or held["assignee"] != me:
            continue
        holder = queue.state(after, about=tid, own=True).holder(task)
        if holder is None:
            continue
        others = [r["assignee"] for r, _raw in arrived
                  if isinstance(r.get("assignee"), str) and r["assignee"] != me
                  and not r.get("released_at")]
        if holder["assignee"] == me and not others:
            continue  # only our own renewals came back
        line = next((raw for r, raw in arrived if r.get("assignee") == (
            holder["assignee"] if holder["assignee"] != me else others[0])), b"")
        mine = queue.typed_record(after, queue.claim_id(tid, me), tid) or {}
        out.append({"id": tid, "description": task.get("description"),
                    "holder": holder["assignee"], "won": holder["assignee"] == me,
                    "others": sorted(set(others)), "by": author(line, "theirs"),
                    "taken_over": bool(mine.get("released_at") and mine.get("taken_over_by"))})
    return out


# Field groups a fast-forward reports when they replaced a value you set: what people
# choose (a status moving on in the work queue is the task's course, not a replacement;
# a close of yours undone is one).
_GROUPS = ("description", "priority", "tags")


def replaced_values(ours: bytes, theirs: bytes, me: str | None, author: Author
                    ) -> list[dict[str, Any]]:
    """After a fast-forward from `ours` to `theirs`: each value of a task that `theirs`
    replaced, when the line that had set it in `ours` was committed by `me` (an e-mail
    address): {"id", "description", "field", "lost", "kept", "kept_by"}. Without an
    identity, nothing."""
    import orjson

    from aidp.tasklist.fields import fold_bytes
    from aidp.tasklist.fold import TASK, field_value, read_line

    if me is None or not theirs.startswith(ours):
        return []
    tail = theirs[len(ours):]
    touched = set()
    for raw in tail.split(b"\n"):
        kind, rid, _record = read_line(raw)
        if kind == TASK:
            touched.add(orjson.dumps(rid))
    if not touched or len(touched) > 256:
        return []
    before = fold_bytes(_narrowed(ours, touched))
    after = fold_bytes(_narrowed(theirs, touched))
    mine = f"<{me.strip().lower()}>"
    out: list[dict[str, Any]] = []
    for tid, now in after.tasks.items():
        was = before.tasks.get(tid)
        if was is None or was == now:
            continue
        groups = [g for g in _GROUPS if field_value(was, g) != field_value(now, g)]
        if was.get("status") in ("done", "abandoned") and now.get("status") != was["status"]:
            groups.append("status")
        if not groups:
            continue
        if not author(_task_line(ours, tid, was), "ours").lower().endswith(mine):
            continue  # the value it replaced was someone else's
        kept_by = author(_task_line(theirs, tid, now), "theirs")
        for group in groups:
            lost, kept = (_shown(field_value(r, group), group) for r in (was, now))
            out.append({"id": tid, "description": now.get("description"), "field": group,
                        "lost": lost, "kept": kept, "kept_by": kept_by})
    return out


def _task_line(data: bytes, tid: str, record: Record) -> bytes:
    """The last line of `data` holding the task record `record` (its id and stamp)."""
    import orjson

    key, stamp = orjson.dumps(tid), orjson.dumps(record.get("updated_at"))
    for raw in reversed(data.split(b"\n")):
        if key in raw and stamp in raw and not raw.startswith(b'{"type"'):
            return raw
    return b""


def _shown(value: object, group: str) -> object:
    if group == "tags":
        return sorted(value)  # type: ignore[call-overload]
    if group == "status":
        return value[0] if isinstance(value, tuple) and value else value
    return value
