"""What a task holds beyond its record: a body (Markdown), a type and a close reason
(docs/file-format.md, "Body, type and close reason").

The Ruby original drops a task line with a key it does not know, so none of them is a
key of the task record: each is a typed record of its own, keyed by the task id and
folded by the same rule as every record (the greatest (updated_at, line) per id wins):

- `body`          `body:<task>`          the body; `""` once removed
- `task_type`     `task_type:<task>`     the type (none: `task`)
- `close_reason`  `close_reason:<task>`  why it was done, with the `completed_at` of that
                                         close: shown only while the task is done at
                                         that moment (a reopen hides it, as it removes
                                         `abandoned_reason`; writes nothing)

One record per field, written only when that field changes: a body edited on one clone
and a priority on another both survive a union merge; two edits of one body, the later
wins. A 64 KiB body is never repeated by the task's other changes.

Pure builders and checks; the queue's fold (aidp.backlog.queue.folded.state) gathers
them with the links, and the writers (tasks.add, queue.add/edit, tasks.set_status)
append them.
"""

from __future__ import annotations

from collections.abc import Mapping

from aidp.core.errors import InvalidInput
from aidp.core.model import (
    CONTROL_RE,
    Record,
    format_ts,
    next_updated_at,
    validate_reason,
)
from aidp.tasklist.log import Fold

BODY, TYPE, REASON = "body", "task_type", "close_reason"
KINDS = (BODY, TYPE, REASON)
TYPES = ("task", "bug", "feature", "chore", "epic")
DEFAULT_TYPE = "task"
MAX_BODY = 64 * 1024  # bytes of UTF-8
MAX_BODY_TEXT = "64 KiB"


def clean_body(text: str) -> str:
    """A body as it is stored: Markdown of at most 64 KiB (UTF-8), CRLF line ends made
    LF, leading blank lines and trailing white space gone; "" for none. Any other
    control character than newline and tab is refused (InvalidInput, exit 2)."""
    text = text.replace("\r\n", "\n")
    lines = text.rstrip().split("\n")
    while lines and not lines[0].strip():
        del lines[0]
    body = "\n".join(lines)
    bad = CONTROL_RE.search(body.replace("\n", "").replace("\t", ""))
    if bad is not None:
        raise InvalidInput(f"Invalid body: it contains the control character "
                           f"U+{ord(bad.group()):04X}; Markdown text only (newlines and "
                           "tabs are fine)")
    size = len(body.encode("utf-8", "surrogatepass"))
    if size > MAX_BODY:
        raise InvalidInput(f"Invalid body: {size:,} bytes; at most {MAX_BODY_TEXT} "
                           f"({MAX_BODY:,} bytes of UTF-8) are accepted")
    return body


def validate_type(value: str) -> str:
    normal = value.strip().lower()
    if normal not in TYPES:
        raise InvalidInput(f"Invalid type {value!r}: use one of {', '.join(TYPES)}")
    return normal


def check(body: str | None = None, task_type: str | None = None,
          reason: str | None = None) -> tuple[str | None, str | None, str | None]:
    """The values as stored (None: not given), each checked before anything is read
    or written."""
    return (None if body is None else clean_body(body),
            None if task_type is None else validate_type(task_type),
            None if reason is None else validate_reason(reason))


def record_id(kind: str, tid: str) -> str:
    return f"{kind}:{tid}"


def record(kind: str, tid: str, value: str, stamp: str, **more: str) -> Record:
    """The record setting field `kind` of task `tid` to `value`, stamped `stamp`."""
    return {"type": kind, "id": record_id(kind, tid), "task": tid, kind: value, **more,
            "updated_at": stamp}


def for_new_task(task: Record, *, body: str | None = None,
                 task_type: str | None = None) -> list[Record]:
    """The records a new task is filed with (checked values; none for an empty body or
    the default type), stamped with the task's own time: a new id has no earlier record."""
    stamp, tid = task["updated_at"], task["id"]
    out = []
    if body:
        out.append(record(BODY, tid, body, stamp))
    if task_type is not None and task_type != DEFAULT_TYPE:
        out.append(record(TYPE, tid, task_type, stamp))
    return out


def filed_with(task: Record, *, body: str | None = None,
               task_type: str | None = None) -> Record:
    """What `show --json` adds to `task`, just filed with `body` and `task_type` (as
    given: checked here again), without reading the log."""
    body, task_type, _ = check(body, task_type)
    return shown(task, {r["type"]: r for r in for_new_task(task, body=body,
                                                            task_type=task_type)})


def current(fold: Fold, tid: str) -> dict[str, Record]:
    """kind -> the winning record of each of the task's fields (those it has)."""
    return {str(r.get("type")): r for _rid, _key, r in fold.typed_records(tid, own=True)
            if r.get("type") in KINDS and r.get("task") == tid}


def changes(fold: Fold, tid: str, *, body: str | None = None,
            task_type: str | None = None) -> list[Record]:
    """The records an edit of the task's body and/or type writes: one per field whose
    value changes (checked values; None: not changed), each stamped past its own last."""
    have = current(fold, tid)
    out = []
    for kind, value, default in ((BODY, body, ""), (TYPE, task_type, DEFAULT_TYPE)):
        if value is None:
            continue
        previous = have.get(kind)
        if value != value_of(previous, kind, default):
            out.append(record(kind, tid, value, format_ts(next_updated_at(previous))))
    return out


def close_record(fold: Fold, done: Record, reason: str) -> Record:
    """The close reason of `done` (the task's snapshot that closes it), stamped past the
    task's last one."""
    previous = current(fold, done["id"]).get(REASON)
    return record(REASON, done["id"], reason, format_ts(next_updated_at(previous)),
                  completed_at=str(done.get("completed_at")))


def value_of(found: Record | None, kind: str, default: str) -> str:
    value = None if found is None else found.get(kind)
    return value if isinstance(value, str) and value else default


def shown(task: Record, found: Mapping[str, Record]) -> Record:
    """The keys a task shows in JSON from its records `found` (kind -> record), only
    those that are set: `task_type` unless `task`, `close_reason` while the close it
    was given for stands, `body` when it has one (and `found` holds it: a listing
    leaves bodies out, see queue.state)."""
    out: Record = {}
    kind = value_of(found.get(TYPE), TYPE, DEFAULT_TYPE)
    if kind != DEFAULT_TYPE:
        out[TYPE] = kind
    reason = found.get(REASON)
    if (reason is not None and task.get("status") == "done" and isinstance(
            reason.get(REASON), str) and reason.get("completed_at") == task.get("completed_at")):
        out[REASON] = reason[REASON]
    text = value_of(found.get(BODY), BODY, "")
    if text:
        out[BODY] = text
    return out


def of_fold(fold: Fold) -> dict[str, Record]:
    """task -> the keys it shows from its records (`shown`), for every task of a fold
    that has any: what `tasks changes` and a merge's report compare."""
    found: dict[str, dict[str, Record]] = {}
    for _rid, _key, r in fold.typed_records():
        task = r.get("task")
        if r.get("type") in KINDS and isinstance(task, str):
            found.setdefault(task, {})[str(r["type"])] = r
    out = {}
    for tid, held in found.items():
        task = fold.tasks.get(tid)
        if task is not None and (keys := shown(task, held)):
            out[tid] = keys
    return out


def preview(text: object) -> str:
    """A body on one line, for a list of changes: its first line that says something,
    clipped, and how many lines it has."""
    if not isinstance(text, str) or not text:
        return "(none)"
    lines = text.split("\n")
    first = next((line.strip() for line in lines if line.strip()), "")
    first = first if len(first) <= 40 else first[:39] + "…"
    return f"{first!r} ({len(lines)} line{'s' if len(lines) != 1 else ''})"


# --- other tools' items (aidp.interchange) ------------------------------------------------


def foreign(values: dict[str, object], extra: dict[str, object], fields: dict[str, str]
            ) -> dict[str, str]:
    """An imported item's body, type and close reason (`values`: kind -> what the item
    holds; `fields`: kind -> the item's name for it), each checked as aidp checks its
    own. One that does not pass (a body over 64 KiB or with control characters, a type
    aidp has no word for) stays in `extra` under its field name, kept in the import
    note as everything without a place in a task; the others leave it."""
    checks = {BODY: clean_body, TYPE: validate_type, REASON: validate_reason}
    out: dict[str, str] = {}
    for kind, value in values.items():
        try:
            checked = checks[kind](value) if isinstance(value, str) else None
        except InvalidInput:
            checked = None
        if checked or value in (None, ""):
            extra.pop(fields[kind], None)
            if checked:
                out[kind] = checked
    return out


def imported(task: Record, held: Mapping[str, str]) -> list[Record]:
    """The records an imported task is filed with (`held`: from `foreign`), stamped with
    the task's own time; a close reason only for a task done."""
    out = for_new_task(task, body=held.get(BODY), task_type=held.get(TYPE))
    reason = held.get(REASON)
    if reason and task.get("status") == "done":
        out.append(record(REASON, task["id"], reason, task["updated_at"],
                          completed_at=str(task.get("completed_at"))))
    return out

