"""Tasks in and out of other tools' formats: `tasks export` and `tasks import`.

One module per format, each a pure mapping both ways where the format has both:
`parse(data) -> list[Incoming]` (raises `BadFile` naming the line and field) and
`dump(tasks) -> bytes`. This package adds what they share: the text clean-up every
foreign value goes through (cleaning.py, re-exported here), and `plan_import`, which
turns parsed items into the records one locked append writes (see docs/guide.md,
"Export and import").

Nothing here prints or touches the file system; `aidp.cli.tasks` reads the file and
calls `import_items` (one `log.update`) or writes the export.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from importlib import import_module
from typing import Any

import orjson

from aidp.backlog import details
from aidp.core.errors import InvalidInput
from aidp.core.model import (
    CONTROL_RE,
    PRIORITIES,
    STATUSES,
    TASK_ID_RE,
    TASK_KEY_ORDER,
    Record,
    canonical,
    format_ts,
    now_micros,
    parse_ts,
)
from aidp.core.plain import Plain
from aidp.interchange.cleaning import (
    OF_YEARS,
    BadFile,
    build_task,
    choice,
    description,
    one_line,
    tags,
    timestamp,
)
from aidp.tasklist.fold import Fold
from aidp.tasklist.line import MAX_DEPTH, admit, too_deep
from aidp.tasklist.log import TaskLog

EXPORT_FORMATS = ("markdown", "csv", "jsonl", "taskwarrior", "beads")
# The formats whose dump writes the work queue (a task's `blocked_by`, `parent`,
# `assignee` and `notes`, as `queue.with_extras` adds them; markdown and beads also
# `task_type`, `close_reason` and `body`): the others write task records only (jsonl:
# exactly as stored; csv: the stored keys).
WITH_QUEUE = ("markdown", "taskwarrior", "beads")
IMPORT_FORMATS = ("csv", "jsonl", "markdown", "taskwarrior", "beads", "github")
_MODULES = {"markdown": "markdown", "csv": "csv_format", "jsonl": "jsonl",
            "taskwarrior": "taskwarrior", "beads": "beads", "github": "github"}

SOURCE_TYPE = "import_source"
NOTE_TYPE = "note"  # the work queue's note record (docs/file-format.md)
MAX_NOTE = 2000
IMPORT_AUTHOR = "aidp import"


def json_lines(text: str, name: str, *, hint: str | None, not_object: str
               ) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line number, "NAME: line N", object) for each non-blank line of a JSON Lines
    file. A line that is not JSON is a BadFile saying so, with `hint` in parentheses
    (None: the decoder's reason); one that is not an object says `not_object`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name}: line {number}"
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            why = hint if hint is not None else exc.args[0].split(":")[0]
            raise BadFile(where, f"is not JSON ({why})") from None
        if not isinstance(value, dict):
            raise BadFile(where, not_object)
        yield number, where, value


class Incoming(Plain):
    """One task read from a file.

    `task` holds aidp's keys (no `id` unless `native`); `key` is the stable source key
    that makes a second import of the same item file nothing; `extra` keeps what has no
    place in a task (shown in a note and kept whole in the import_source record);
    `details` the task's body, type and close reason (aidp.backlog.details: kind ->
    value, checked: `held`), filed as records of their own. A task record holds the
    Ruby original's keys only: any other key of `task` goes to `extra` (prepare).
    """

    _fields = ("key", "task", "extra", "native", "line", "same_as", "blocked_by", "parent",
               "details", "assignee", "notes", "claim")

    def __init__(self, key: str, task: Record, extra: dict[str, Any] | None = None, *,
                 native: bool = False, line: int = 0, same_as: str | None = None,
                 blocked_by: Sequence[str] = (), parent: str | None = None,
                 details: dict[str, str] | None = None, assignee: str | None = None,
                 notes: Sequence[tuple[str | None, str, str | None]] = (),
                 claim: Record | None = None) -> None:
        self.key = key
        self.task = task
        self.extra = extra or {}
        self.native = native
        self.line = line
        self.same_as = same_as  # the aidp task an export of ours wrote this item from
        self.blocked_by = list(blocked_by)  # source keys of the items it waits on (or ids)
        self.parent = parent  # source key of its epic (or its id)
        self.details = details or {}
        self.assignee = assignee  # who holds it: a claim, unless it is pending
        self.notes = list(notes)  # (author or None, text, created_at or None), oldest first
        self.claim = claim or {}  # the claim's claimed_at, lease, lease_until, when known


def module(fmt: str) -> Any:
    return import_module(f"aidp.interchange.{_MODULES[fmt]}")


def check_format(fmt: str, allowed: Sequence[str], option: str) -> str:
    normal = fmt.strip().lower()
    if normal not in allowed:
        raise InvalidInput(f"Invalid {option} {fmt!r}: use one of {', '.join(allowed)}")
    return normal


# --- the import -----------------------------------------------------------------------


class ImportResult(Plain):
    _fields = ("source", "filed", "skipped", "records")

    def __init__(self, source: str, filed: list[Record], skipped: int,
                 records: list[Record]) -> None:
        self.source = source
        self.filed = filed  # the new tasks
        self.skipped = skipped  # items already imported (or already present)
        self.records = records  # everything appended


def source_id(source: str, key: str) -> str:
    """The id of the record naming the task an import of `source` filed for item `key`."""
    return f"{SOURCE_TYPE}:{source}:{key}"


def task_id_for(source: str, key: str, created_at: str) -> str:
    """A task id derived from the source key: two clones importing the same file file
    the same ids, so a union merge of both folds to one task each."""
    digest = hashlib.sha256(f"{source}\0{key}".encode()).hexdigest()[:8]
    seconds = (parse_ts(created_at) or 0) // 1_000_000
    return f"task_{max(seconds, 0)}_{digest}"


def note_text(source: str, key: str, extra: dict[str, Any]) -> str:
    """The note shown with an imported task: where it came from and what aidp has no
    field for, as compact JSON on one line (cut at 2,000 characters; the
    import_source record keeps it whole)."""
    body = orjson.dumps(extra, option=orjson.OPT_SORT_KEYS).decode()
    text = f"Imported from {source} ({key}): {body}"
    text = CONTROL_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text if len(text) <= MAX_NOTE else text[: MAX_NOTE - 1] + "…"


class _Planned(Plain):
    """One parsed item with the records it files, built before the lock is taken."""

    _fields = ("item", "task", "sid", "extra_records")

    def __init__(self, item: Incoming, task: Record, sid: str | None,
                 extra_records: list[Record]) -> None:
        self.item = item
        self.task = task
        self.sid = sid  # its import_source id; None for a task in aidp's own shape
        self.extra_records = extra_records  # its note and import_source record


def prepare(items: Sequence[Incoming], source: str, *,
            now: int | None = None) -> list[_Planned]:
    """Every item's task, note and import_source record, checked: what does not depend
    on the tasklist's state, so it is done without the lock. An import files tasks
    only: a record that would not read back as a task (a `type` key: a TODO list or a
    work-queue record; a stamp out of reach; too deep) is refused (BadFile)."""
    stamp = format_ts(now_micros() if now is None else now)
    planned: list[_Planned] = []
    for n, item in enumerate(items, start=1):
        # Never a key of no task record in one: the Ruby original would drop the task.
        # Whatever the format put there goes to the note with the rest of the item.
        stray = {k: v for k, v in item.task.items()
                 if k not in TASK_KEY_ORDER and k != "type"}  # a type: refused below
        if stray:
            item.task = {k: v for k, v in item.task.items() if k not in stray}
            item.extra = {**stray, **item.extra}
        if item.native:
            task = item.task
            sid = None
            extra: list[Record] = details.imported(task, item.details)
            if item.extra:  # an aidp listing's keys of no record: its note says them
                extra.append(_import_note(task["id"], source, item, stamp))
        else:
            sid = source_id(source, item.key)
            tid = task_id_for(source, item.key, item.task["created_at"])
            task = canonical({"id": tid, **item.task})
            extra = details.imported(task, item.details)
            source_record: Record = {"type": SOURCE_TYPE, "id": sid, "task": tid,
                                     "source": source, "key": item.key}
            if item.extra:
                source_record["fields"] = item.extra
                extra.append(_import_note(tid, source, item, stamp))
            source_record["imported_at"] = stamp
            source_record["updated_at"] = stamp
            extra.append(source_record)
        extra += _queue_records(item, task, stamp)
        if "type" in task or admit(task, orjson.dumps(task)) is None:
            where = f"line {item.line}" if item.line else f"item {n}"
            raise BadFile(f"{source} {where}", "is not a task aidp can file (only tasks "
                                               "are imported: no `type`, stamps in years "
                                               "1–9999)")
        planned.append(_Planned(item, task, sid, extra))
    return planned


def _import_note(tid: str, source: str, item: Incoming, stamp: str) -> Record:
    """The note on the task saying where it came from and what it held that aidp has
    no place for (one per task: its id is the task's)."""
    return {"type": NOTE_TYPE, "id": f"{NOTE_TYPE}:{tid}:{tid.rpartition('_')[2]}",
            "task": tid, "text": note_text(source, item.key, item.extra),
            "author": IMPORT_AUTHOR, "created_at": stamp, "updated_at": stamp}


def assignee_of(value: object, status: str, extra: dict[str, Any], key: str
                ) -> str | None:
    """The holder an item names (Beads' `assignee`, aidp's `aidp_assignee` UDA), for
    a task that is not pending: it becomes the task's claim (a pending task has no
    holder in aidp: the name stays in the note, `extra[key]`)."""
    name = one_line(value) if isinstance(value, str) else ""
    if not name or status == "pending":
        if value is not None:
            extra[key] = value
        return None
    extra.pop(key, None)
    return name[:200]


def _queue_records(item: Incoming, task: Record, stamp: str) -> list[Record]:
    """The item's claim (made when the item says, else when it started, else when it
    was filed: never after it closed; with its lease when the item says) and its notes
    (stamped when the item says, else now), keyed by the task so that a second import
    adds none."""
    from aidp.backlog import queue

    tid = task["id"]
    records: list[Record] = []
    if item.assignee and task.get("status") != "pending":
        claimed = item.claim.get("claimed_at") or task.get("started_at") or task["created_at"]
        records.append({"type": queue.CLAIM, "id": queue.claim_id(tid, item.assignee),
                        "task": tid, "assignee": item.assignee, "claimed_at": claimed,
                        **{k: v for k, v in item.claim.items() if k != "claimed_at"},
                        "updated_at": stamp})
    for n, (author, text, at) in enumerate(item.notes, start=1):
        body = CONTROL_RE.sub(" ", text).strip()[:MAX_NOTE]
        if not body:
            continue
        digest = hashlib.sha256(f"{tid}\0{n}\0{body}".encode()).hexdigest()[:8]
        note: Record = {"type": NOTE_TYPE, "id": f"{NOTE_TYPE}:{tid}:{digest}", "task": tid,
                        "text": body}
        if author:
            note["author"] = CONTROL_RE.sub(" ", author).strip()[:200]
        note["created_at"] = at or stamp
        note["updated_at"] = stamp
        records.append(note)
    return records


def settle(fold: Fold, planned: Sequence[_Planned], source: str, *,
           now: int | None = None) -> ImportResult:
    """What importing the prepared items appends to a log in state `fold`: each item not
    imported before (nor present: an id, an export of ours) with its records, then the
    work queue's links between the tasks of this source (aidp.interchange.links). Runs
    under the lock: linear in the items and the links. Pure."""
    from aidp.interchange.links import links

    stamp = format_ts(now_micros() if now is None else now)
    filed: list[Record] = []
    records: list[Record] = []
    skipped = 0
    seen_tasks: set[str] = set()
    seen_sources: set[str] = set()
    new_items: list[tuple[Incoming, str]] = []
    for plan in planned:
        item, task, sid = plan.item, plan.task, plan.sid
        tid = task["id"]
        if sid is not None:
            if item.same_as is not None and item.same_as in fold.tasks:
                skipped += 1  # exported from this backlog: the task is here already
                continue
            if sid in seen_sources or fold.typed_record(sid) is not None:
                skipped += 1
                continue
            seen_sources.add(sid)
        if tid in fold.tasks or tid in seen_tasks:
            skipped += 1  # present, or filed by an import whose source record was compacted
            continue
        seen_tasks.add(tid)
        filed.append(task)
        records.append(task)
        records.extend(plan.extra_records)
        new_items.append((item, tid))
    linked = links(fold, source_id(source, ""), new_items, stamp)
    records.extend(linked)
    records.extend(_left_out(new_items, linked, source, stamp))
    return ImportResult(source, filed, skipped, records)


def _left_out(new_items: Sequence[tuple[Incoming, str]], linked: Sequence[Record],
              source: str, stamp: str) -> list[Record]:
    """A note on each task in aidp's own shape (whose links name task ids) naming the
    links that were not made — to a task neither the file nor the backlog holds, or on
    a cycle — so nothing it showed is lost (a foreign item's raw links are in its
    import note already)."""
    made = {(r["task"], r["type"], r.get("blocked_by", r.get("parent"))) for r in linked}
    out: list[Record] = []
    for item, tid in new_items:
        if not item.native:
            continue
        left: dict[str, Any] = {}
        waits = [b for b in dict.fromkeys(item.blocked_by) if (tid, "dep", b) not in made]
        if waits:
            left["blocked_by"] = waits
        if item.parent and (tid, "parent", item.parent) not in made:
            left["parent"] = item.parent
        if left:
            said = orjson.dumps(left, option=orjson.OPT_SORT_KEYS).decode()
            digest = hashlib.sha256(f"{tid}\0links\0{said}".encode()).hexdigest()[:8]
            out.append({"type": NOTE_TYPE, "id": f"{NOTE_TYPE}:{tid}:{digest}", "task": tid,
                        "text": f"Imported from {source} ({item.key}): links left out (no "
                                f"such task here, or on a cycle): {said}"[:MAX_NOTE],
                        "author": IMPORT_AUTHOR, "created_at": stamp, "updated_at": stamp})
    return out


def plan_import(fold: Fold, items: Sequence[Incoming], source: str, *,
                now: int | None = None) -> ImportResult:
    """What importing `items` appends to a log in state `fold` (prepare, then settle):
    for each item not imported before, its task, its import_source record and (when it
    has fields aidp keeps nowhere else) a note; then the links. Pure."""
    return settle(fold, prepare(items, source, now=now), source, now=now)


def import_items(log: TaskLog, items: Sequence[Incoming], source: str) -> ImportResult:
    """Append what the items file in one locked read-modify-append. Everything that does
    not depend on the tasklist (parsing was done already; the records and their checks)
    is built first: the lock is held only to fold the current state, settle against it
    and append."""
    planned = prepare(items, source)
    result: list[ImportResult] = []

    def change(fold: Fold) -> list[Record]:
        result[:] = [settle(fold, planned, source)]
        return result[0].records

    log.update(change)
    return result[0]


def parse(fmt: str, data: bytes, name: str) -> list[Incoming]:
    """The items of a file in format `fmt`; `name` is how messages call the file."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BadFile(f"{name}: line {line}", "is not valid UTF-8 text") from None
    items: list[Incoming] = module(fmt).parse(text, name)
    for n, item in enumerate(items, start=1):
        # The task is a record of its own; what it has no field for goes one level
        # down, into the import_source record's "fields" (aidp.tasklist.line.MAX_DEPTH).
        if too_deep(item.task) or too_deep(item.extra, MAX_DEPTH - 1):
            where = f"{name}: line {item.line}" if item.line else f"{name}: item {n}"
            raise BadFile(where, f"nests JSON more than {MAX_DEPTH} levels deep, more "
                                 "than aidp writes back")
    return items


def dump(fmt: str, tasks: Sequence[Record], *, raw: bool = False) -> bytes:
    """`tasks` in `fmt`; `raw`: csv cells exactly as stored, formula-like ones too."""
    if raw and fmt != "csv":
        raise InvalidInput(f"Invalid --raw with --format {fmt}: it applies to csv only")
    data: bytes = module(fmt).dump(tasks, raw=raw) if fmt == "csv" else module(fmt).dump(tasks)
    return data


__all__ = [  # the cleaning names are aidp.interchange.cleaning's, for the format modules
    "EXPORT_FORMATS",
    "IMPORT_FORMATS",
    "OF_YEARS",
    "PRIORITIES",
    "STATUSES",
    "TASK_ID_RE",
    "BadFile",
    "ImportResult",
    "Incoming",
    "build_task",
    "choice",
    "description",
    "dump",
    "import_items",
    "one_line",
    "parse",
    "plan_import",
    "tags",
    "timestamp",
]
