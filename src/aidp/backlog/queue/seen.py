"""A change made from a view that may be out of date: the values that view showed of the
fields it changes, checked against the state inside the writer's lock (docs/guide.md,
"The board": a change made on a stale view never silently overwrites a field changed
since).

A writer that takes `expect` (tasks.set_status, queue.edit, queue.release) calls `check`
on the fold it changes, under the lock: every field named must still hold the value the
view showed, else the change is refused (`ChangedSince`, exit 1) and nothing is written.
Fields the view did not name are not compared: a change to the priority goes through
while an agent edits the body, both kept (the field-level rule of a merge).
"""

from __future__ import annotations

from collections.abc import Mapping

from aidp.core.errors import AidpError, ExitCode, InvalidInput
from aidp.core.model import Record
from aidp.tasklist.log import Fold

# The fields a view may say it saw: the task record's own, its body, and who holds it.
FIELDS = ("status", "priority", "description", "body", "assignee")


class ChangedSince(AidpError):
    """A field changed since the view that asked for the change showed it (exit 1)."""

    exit_code = ExitCode.FAILURE

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def validate(expect: Mapping[str, object]) -> dict[str, str | None]:
    """The expectations as a writer checks them: known fields, text or null values
    (InvalidInput, exit 2, before anything is read)."""
    out: dict[str, str | None] = {}
    for key, value in expect.items():
        if key not in FIELDS:
            raise InvalidInput(f"Invalid field {key!r} in what the view saw: use one of "
                               f"{', '.join(FIELDS)}")
        if value is not None and not isinstance(value, str):
            raise InvalidInput(f"Invalid value for {key!r} in what the view saw: text or "
                               "null")
        out[key] = value or None
    return out


def current(fold: Fold, task: Record, field: str) -> str | None:
    """The value `field` of `task` has in `fold` now (None: none)."""
    if field == "body":
        from aidp.backlog import details

        record = details.current(fold, task["id"]).get(details.BODY)
        value = record.get(details.BODY) if record is not None else None
    elif field == "assignee":
        from aidp.backlog.queue.folded import state

        holder = state(fold, about=task["id"]).holder(task)
        value = holder.get("assignee") if holder is not None else None
    else:
        value = task.get(field)
    return value if isinstance(value, str) and value else None


def check(fold: Fold, tid: str, expect: Mapping[str, str | None] | None) -> None:
    """Refuse (ChangedSince) when a field of task `tid` no longer holds what the view
    showed (`expect`: field -> value; None: nothing to check)."""
    if not expect:
        return
    task = fold.tasks[tid]
    for field, seen in expect.items():
        now = current(fold, task, field)
        if now != seen:
            from aidp.backlog.ids import short_ids

            label = short_ids(fold, [tid]).get(tid, tid)
            raise ChangedSince(
                f"Refused: the {field} of task {label} changed since this view showed it "
                f"({_said(seen)} then, {_said(now)} now); nothing was written: look again "
                "and retry", field)


def _said(value: str | None) -> str:
    if value is None:
        return "none"
    text = value if len(value) <= 40 else value[:39] + "…"
    return repr(text)
