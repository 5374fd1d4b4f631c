"""What the page asks of the server, beyond the board itself: one task's detail, and
the edits — each a use case of aidp.app, the CLI's own (the same write path, lock and
field-level merge), with plain JSON in and out.

A change made from the page says what the page showed of the fields it changes
(`seen`: {"status": "pending"}); the writer checks it under the lock and refuses the
change, writing nothing, when such a field changed since (aidp.backlog.queue.seen). Fields
the page did not change are never written: a priority set on the board and a body an
agent edited meanwhile both stay.

Errors are AidpErrors with their exit code: 2 (bad input) is answered 400, 1 (a
refusal, not found) 409 or 404 (aidp.board.server).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aidp.app.project import Project
from aidp.core.errors import InvalidInput

Payload = dict[str, Any]


def _text(payload: Payload, key: str, *, required: bool = True) -> str | None:
    value = payload.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"Invalid {key!r}: give it as text")
    return value


def _seen(payload: Payload) -> dict[str, str | None] | None:
    from aidp.backlog.queue.seen import validate

    seen = payload.get("seen")
    if seen is None:
        return None
    if not isinstance(seen, dict):
        raise InvalidInput("Invalid 'seen': give an object of the fields the page showed")
    return validate(seen)


def _tags(payload: Payload) -> list[str]:
    tags = payload.get("tags") or []
    if isinstance(tags, str):
        tags = [t for t in (part.strip() for part in tags.split(",")) if t]
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InvalidInput("Invalid 'tags': give a list of text, or text separated by commas")
    return tags


def detail(project: Project, tid: str) -> Payload:
    """Everything the page's detail panel shows of one task."""
    from aidp.app.shown import show_task
    from aidp.app.timeline import timeline

    found = show_task(project, tid)
    related = {other: {"description": task.get("description"), "status": task.get("status")}
               if task is not None else None for other, task in found.related.items()}
    moments = [{"at": m.at, "what": m.what} for m in timeline(project, found.task["id"])]
    return {"task": found.shown, "body": found.body, "blocked_by": found.blocked_by,
            "blocks": found.blocks, "parent": found.parent, "children": found.children,
            "related": related, "notes": found.notes, "history": moments,
            "short_ids": found.short_ids}


def add(project: Project, payload: Payload) -> Payload:
    from aidp.app.filing import file_task

    filed = file_task(project, _text(payload, "description") or "",
                      priority=_text(payload, "priority", required=False) or "medium",
                      tags=_tags(payload), body=_text(payload, "body", required=False),
                      task_type=_text(payload, "type", required=False))
    return {"id": filed.task["id"], "message": f"Filed {filed.short_id}"}


def move(project: Project, payload: Payload) -> Payload:
    from aidp.app.changing import transition

    tid = _text(payload, "id") or ""
    status = _text(payload, "status") or ""
    reason = _text(payload, "reason", required=False)
    changed = transition(project, [tid], status, reason=reason or None,
                         expect=_seen(payload))
    change = changed.changes[0]
    short = changed.short_ids.get(change.task["id"], tid)
    word = "Moved" if change.changed else "Already"
    return {"id": change.task["id"], "message": f"{word} {short}: {change.task['status']}"}


def claim(project: Project, payload: Payload) -> Payload:
    from aidp.app.claiming import claim_task

    made = claim_task(project, _text(payload, "id"))
    holder = made.claim.get("assignee") if made.claim else None
    short = made.short_ids.get(made.task["id"], made.task["id"])
    return {"id": made.task["id"], "message": f"Claimed {short} as {holder}"}


def release(project: Project, payload: Payload) -> Payload:
    from aidp.app.claiming import release_tasks

    tid = _text(payload, "id") or ""
    changed = release_tasks(project, [tid], expect=_seen(payload))
    task = changed.changes[0].task
    return {"id": task["id"], "message": f"Released {changed.short_ids.get(task['id'], tid)}"}


def edit(project: Project, payload: Payload) -> Payload:
    from aidp.app.changing import edit_task

    tid = _text(payload, "id") or ""
    changed = edit_task(project, tid,
                        description=_text(payload, "description", required=False),
                        priority=_text(payload, "priority", required=False),
                        body=_text(payload, "body", required=False),
                        task_type=_text(payload, "type", required=False),
                        expect=_seen(payload))
    task = changed.changes[0].task
    word = "Changed" if changed.changes[0].changed else "Unchanged"
    return {"id": task["id"], "message": f"{word} {changed.short_ids.get(task['id'], tid)}"}


def note(project: Project, payload: Payload) -> Payload:
    from aidp.app.changing import note_task
    from aidp.app.claiming import actor

    noted = note_task(project, _text(payload, "id") or "", _text(payload, "text") or "",
                      author=actor(project, None))
    return {"id": noted.note["task"], "message": f"Noted on {noted.short_id}"}


ACTIONS: dict[str, Callable[[Project, Payload], Payload]] = {
    "add": add, "move": move, "claim": claim, "release": release, "edit": edit, "note": note,
}
