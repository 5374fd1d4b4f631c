"""Checks for task records in aidp's own shape (jsonl and csv imports)."""

from __future__ import annotations

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
from aidp.interchange import OF_YEARS, BadFile

_STAMPS = ("created_at", "updated_at", "started_at", "completed_at", "abandoned_at")


def check_native(record: Record, where: str) -> Record:
    """The record, if aidp could have written it as a task; else a BadFile naming the
    field. A `type` (in a jsonl line, a CSV column or a CSV row's `extra`) would make it
    a TODO list or work-queue record: imports file tasks only."""
    if "type" in record:
        raise BadFile(where, f"field 'type' ({record['type']!r}) makes it a typed record "
                             "(a TODO list or work-queue record), not a task; only tasks "
                             "are imported")
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
        if value is not None and (not isinstance(value, str) or parse_ts(value) is None
                                  or stamp_out_of_reach(value)):
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
