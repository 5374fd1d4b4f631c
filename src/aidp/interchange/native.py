"""Task records in aidp's own shape (jsonl, csv and markdown imports): the checks of a
task record, and what an aidp listing shows beside the record turned back into what
it is (docs/guide.md, "`aidp tasks import`").

`tasks list -f jsonl` and `--json` (and `show --json`) print each task's record with
the keys aidp shows beside it — its type, close reason and body, its links, claim and
notes (docs/reference.md, "JSON output"). None of them may go into a task record: the
Ruby original drops a task line with a key it does not know. So an import takes each
back as the record of its own it came from (a `task_type`, `close_reason` or `body`
record, a `dep`, `parent`, `claim` or `note`), drops what only restates the others
(`stale`, `waiting_on`, and `blocks`/`children` that the file's other tasks carry),
and keeps every other key in the import's note on the task."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from aidp.backlog import details
from aidp.core.model import (
    MAX_DESCRIPTION,
    PRIORITIES,
    STATUSES,
    TASK_ID_RE,
    TASK_KEY_ORDER,
    Record,
    canonical,
    parse_ts,
    stamp_out_of_reach,
)
from aidp.interchange import OF_YEARS, BadFile, Incoming, assignee_of

_STAMPS = ("created_at", "updated_at", "started_at", "completed_at", "abandoned_at")
TASK_KEYS = frozenset(TASK_KEY_ORDER)  # the keys of a task record: the Ruby original's


def refuse_typed(record: Record, where: str) -> None:
    """A `type` (in a jsonl line, a CSV column or a CSV row's `extra`) would make it a
    TODO list or work-queue record: imports file tasks only."""
    if "type" in record:
        raise BadFile(where, f"field 'type' ({record['type']!r}) makes it a typed record "
                             "(a TODO list or work-queue record), not a task; only tasks "
                             "are imported")


def check_native(record: Record, where: str) -> Record:
    """The record, if aidp could have written it as a task; else a BadFile naming the
    field."""
    refuse_typed(record, where)
    tid = record.get("id")
    if not isinstance(tid, str) or not TASK_ID_RE.fullmatch(tid):
        raise BadFile(where, f"field 'id' is not a task id (task_<seconds>_<8 hex>): {tid!r}")
    text = record.get("description")
    if not isinstance(text, str) or not text.strip() or len(text.strip()) > MAX_DESCRIPTION:
        raise BadFile(where, f"field 'description' must be 1–{MAX_DESCRIPTION} characters")
    if record.get("status") not in STATUSES:
        raise BadFile(where, f"field 'status' has an unknown value {record.get('status')!r}; "
                             f"accepted: {', '.join(STATUSES)}")
    if record.get("priority", "medium") not in PRIORITIES:
        raise BadFile(where, f"field 'priority' has an unknown value "
                             f"{record.get('priority')!r}; accepted: {', '.join(PRIORITIES)}")
    for key in _STAMPS:
        value = record.get(key)
        if value is not None and not _stamp(value):
            years = f" {OF_YEARS}" if stamp_out_of_reach(value) else ""
            raise BadFile(where, f"field '{key}' is not an ISO-8601 timestamp{years}: "
                                 f"{value!r}")
    if "created_at" not in record or "updated_at" not in record:
        raise BadFile(where, "fields 'created_at' and 'updated_at' are required")
    tags = record.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise BadFile(where, "field 'tags' must be a list of strings")
    for key in TASK_KEY_ORDER:
        value = record.get(key)
        if key not in ("id", "tags") and value is not None and not isinstance(value, str):
            raise BadFile(where, f"field '{key}' must be text")
    return canonical(record)


def _stamp(value: object) -> bool:
    return isinstance(value, str) and parse_ts(value) is not None \
        and not stamp_out_of_reach(value)


def _ids(value: object) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(v, str) and TASK_ID_RE.fullmatch(v)
                                       for v in value):
        return list(value)
    return None


def shown_item(record: Record, where: str, line: int) -> Incoming:
    """A task as an aidp listing shows it (its record and the keys beside it), split
    into the task record (the Ruby original's keys only, checked) and the records of
    its own each shown key comes from; what fits nowhere is the item's `extra`, kept in
    the import's note."""
    refuse_typed(record, where)
    task = check_native({k: v for k, v in record.items() if k in TASK_KEYS}, where)
    extra: dict[str, Any] = {k: v for k, v in record.items() if k not in TASK_KEYS}
    status = task["status"]
    given = {kind: extra[kind] for kind in (details.TYPE, details.BODY) if kind in extra}
    if status == "done" and details.REASON in extra:  # shown only while done
        given[details.REASON] = extra[details.REASON]
    held = details.foreign(given, extra, {kind: kind for kind in details.KINDS})
    blocked_by = _ids(extra.get("blocked_by"))
    if blocked_by is not None:
        del extra["blocked_by"]
        waiting = _ids(extra.get("waiting_on"))  # tasks blocked: the open ones of them
        if waiting is not None and set(waiting) <= set(blocked_by):
            del extra["waiting_on"]
    parent = extra.get("parent")
    if isinstance(parent, str) and TASK_ID_RE.fullmatch(parent):
        del extra["parent"]
    else:
        parent = None
    assignee = assignee_of(extra.get("assignee"), status, extra, "assignee")
    claim = _claim(task, extra) if assignee else {}
    notes = _notes(extra.get("notes"))
    if notes is not None:
        del extra["notes"]
    return Incoming(task["id"], task, extra, native=True, line=line, blocked_by=blocked_by or (),
                    parent=parent, details=held, assignee=assignee, notes=notes or (),
                    claim=claim)


def _claim(task: Record, extra: dict[str, Any]) -> Record:
    """The claim's own keys an item shows beside its assignee: when it was claimed and
    its lease's end (the length: the time between them, in whole seconds as leases
    are given; `stale` follows from them)."""
    claim: Record = {}
    if _stamp(extra.get("claimed_at")):
        claim["claimed_at"] = extra.pop("claimed_at")
    until = extra.get("lease_until")
    if _stamp(until):
        start = parse_ts(str(claim.get("claimed_at") or task.get("started_at")
                             or task["created_at"])) or 0
        seconds = round(((parse_ts(str(until)) or 0) - start) / 1_000_000)
        if seconds >= 1:
            claim["lease"] = seconds
        claim["lease_until"] = extra.pop("lease_until")
    if type(extra.get("stale")) is bool and "lease_until" in claim:
        del extra["stale"]
    return claim


def _notes(value: object) -> list[tuple[str | None, str, str | None]] | None:
    """(author, text, created_at) of each note a listing shows; None unless every one
    is a note as aidp shows it (then they stay in the import's note)."""
    if not isinstance(value, list):
        return None
    out: list[tuple[str | None, str, str | None]] = []
    for note in value:
        if not isinstance(note, dict) or not isinstance(note.get("text"), str) \
                or set(note) - {"text", "author", "created_at"}:
            return None
        author, at = note.get("author"), note.get("created_at")
        if (author is not None and not isinstance(author, str)) or (
                at is not None and not _stamp(at)):
            return None
        out.append((author, note["text"], at))
    return out


def in_filing_order(items: list[Incoming]) -> list[Incoming]:
    """The items oldest first, as a tasklist holds its tasks: a listing (`list -f
    jsonl`, `--json`: newest first, and of one second's tasks the last filed first) is
    read backwards, then any order sorted by `created_at` (stable), so that the tasks
    list after the import as they did before it, ties included, and the links come in
    the order they were made."""
    stamps = [parse_ts(str(item.task.get("created_at"))) or 0 for item in items]
    pairs = list(pairwise(stamps))
    if any(a > b for a, b in pairs) and all(a >= b for a, b in pairs):
        items, stamps = items[::-1], stamps[::-1]
    order = sorted(range(len(items)), key=lambda n: stamps[n])
    return [items[n] for n in order]


def settle_shown(items: Sequence[Incoming]) -> None:
    """`blocks` and `children` (what `show --json` adds) restate the other tasks'
    `blocked_by` and `parent`: each link to a task of the same file is made from that
    task's side (when it does not say so itself) and the key dropped; one naming a task
    the file does not hold stays in the note."""
    found = {item.key: item for item in items if item.native}
    for item in found.values():
        for key in ("blocks", "children"):
            named = _ids(item.extra.get(key))
            if named is None or not all(other in found for other in named):
                continue
            for other in named:
                them = found[other]
                if key == "blocks" and item.key not in them.blocked_by:
                    them.blocked_by.append(item.key)
                elif key == "children" and them.parent is None:
                    them.parent = item.key
            if key == "blocks" or all(found[o].parent == item.key for o in named):
                del item.extra[key]
