"""Taskwarrior's `task export` JSON (an array of tasks; one object per line is also
read) and what `task import` takes.

status: pending → pending, or in_progress when it has `start`; waiting and recurring
→ pending; completed → done (`end` is completed_at); deleted → abandoned (the reason an
aidp export wrote as an `Abandoned: WHY` annotation, or none). Priority H/M/L →
high/medium/low, none → medium. `entry` is created_at, `modified` updated_at; aidp's
own UDAs `aidp_assignee` (the claim of a task that is not pending), `aidp_parent` (the
epic), `aidp_body`, `aidp_type` and `aidp_close_reason` (a done task's) come back as what
they were (one aidp cannot keep as it is stays in the note, as Beads' do). Everything
else (project, due, annotations, depends, urgency, other UDAs…) is kept in the import
note: a Taskwarrior user's own annotations stay notes, never a body. Export writes uuids
derived from the aidp ids, so exporting twice gives the same Taskwarrior tasks, and the
work queue where Taskwarrior has a place for it: blockers as `depends`, notes as
annotations; what it has no field for as UDAs, which `task import` keeps (orphan UDAs):
the assignee and the epic as `aidp_assignee` and `aidp_parent` (the epic's uuid), the
body, type and close reason as `aidp_body`, `aidp_type` and `aidp_close_reason`."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import orjson

from aidp.backlog.details import foreign
from aidp.core.model import Record, parse_ts
from aidp.interchange import (
    BadFile,
    Incoming,
    assignee_of,
    build_task,
    choice,
    description,
    tags,
    timestamp,
)

STATUS = {"pending": "pending", "waiting": "pending", "recurring": "pending",
          "completed": "done", "deleted": "abandoned"}
PRIORITY = {"h": "high", "m": "medium", "l": "low", "": "medium"}
TO_PRIORITY = {"high": "H", "medium": "M", "low": "L"}
TO_STATUS = {"pending": "pending", "in_progress": "pending", "done": "completed",
             "abandoned": "deleted"}
_MAPPED = {"description", "status", "priority", "entry", "modified", "end", "start",
           "tags", "uuid", "id", "urgency"}  # id and urgency are derived, not data
ABANDONED = "Abandoned: "  # the annotation an aidp export writes with the reason
# A task's body, type and close reason (aidp.backlog.details) as aidp's own UDAs.
UDAS = {"body": "aidp_body", "task_type": "aidp_type", "close_reason": "aidp_close_reason"}
NAMESPACE = uuid.UUID("5c3f1e0a-6a8d-4f44-9d51-6f0a1d7e2b90")  # aidp's, for uuid5


def _tw_stamp(value: str | None) -> str | None:
    if not value:
        return None
    micros = parse_ts(value)
    if micros is None:
        return None
    import time

    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(micros // 1_000_000))


def _uuid(tid: object) -> str:
    return str(uuid.uuid5(NAMESPACE, str(tid)))


def dump(tasks: Sequence[Record]) -> bytes:
    """`tasks` as `task import` takes them; the work queue's keys (queue.with_extras)
    when they have them."""
    out = []
    for task in tasks:
        status = task.get("status")
        item: dict[str, Any] = {
            "uuid": _uuid(task.get("id")),
            "description": task.get("description", ""),
            "status": TO_STATUS.get(str(status), "pending"),
            "entry": _tw_stamp(task.get("created_at")),
            "modified": _tw_stamp(task.get("updated_at")),
        }
        if task.get("priority") in TO_PRIORITY:
            item["priority"] = TO_PRIORITY[task["priority"]]
        if status == "in_progress":
            item["start"] = _tw_stamp(task.get("started_at") or task.get("updated_at"))
        if status in ("done", "abandoned"):
            item["end"] = _tw_stamp(task.get("completed_at") or task.get("abandoned_at")
                                    or task.get("updated_at"))
        if task.get("tags"):
            item["tags"] = list(task["tags"])
        if task.get("blocked_by"):
            item["depends"] = [_uuid(b) for b in task["blocked_by"]]
        annotations = [_annotation(note) for note in task.get("notes") or ()]
        if status == "abandoned" and task.get("abandoned_reason"):
            annotations.append({"entry": item["end"],
                                "description": ABANDONED + task["abandoned_reason"]})
        if annotations:
            item["annotations"] = annotations
        if isinstance(task.get("assignee"), str):
            item["aidp_assignee"] = task["assignee"]
        if isinstance(task.get("parent"), str):
            item["aidp_parent"] = _uuid(task["parent"])
        for kind, uda in UDAS.items():  # what a task holds beyond its record
            if isinstance(task.get(kind), str) and task[kind]:
                item[uda] = task[kind]
        item["aidp_id"] = task.get("id")  # orphan UDAs: Taskwarrior keeps them
        out.append({k: v for k, v in item.items() if v is not None})
    return b"[\n" + b",\n".join(orjson.dumps(i) for i in out) + b"\n]\n"


def _annotation(note: Record) -> dict[str, Any]:
    author = note.get("author")
    text = f"{author}: {note['text']}" if isinstance(author, str) else note["text"]
    return {"entry": _tw_stamp(note.get("created_at")), "description": text}


def _objects(text: str, name: str) -> list[tuple[int, Any]]:
    stripped = text.strip()
    if not stripped:
        return []
    if stripped.startswith("["):
        try:
            value = orjson.loads(stripped)
        except orjson.JSONDecodeError as exc:
            raise BadFile(f"{name}: line {_line_of(text, exc)}",
                          "is not valid JSON (a Taskwarrior export is a JSON array)") from None
        if not isinstance(value, list):
            raise BadFile(name, "is not a JSON array of tasks")
        lines = _element_lines(text, len(value))
        return list(zip(lines, value, strict=True))
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                found.append((number, orjson.loads(line.strip().rstrip(","))))
            except orjson.JSONDecodeError:
                raise BadFile(f"{name}: line {number}", "is not a JSON object") from None
    return found


def _line_of(text: str, exc: orjson.JSONDecodeError) -> int:
    pos = getattr(exc, "pos", None)
    return text.count("\n", 0, pos) + 1 if isinstance(pos, int) else 1


def _element_lines(text: str, count: int) -> list[int]:
    """Where each element of a JSON array starts: `task export` puts one per line; for
    other layouts the element number is the best we can name."""
    starts = [n for n, line in enumerate(text.splitlines(), start=1)
              if line.lstrip().startswith("{")]
    return starts if len(starts) == count else list(range(1, count + 1))


def parse(text: str, name: str) -> list[Incoming]:
    items = []
    for number, obj in _objects(text, name):
        where = f"{name}: line {number}"
        if not isinstance(obj, dict):
            raise BadFile(where, "is not a JSON object (a Taskwarrior task)")
        key = obj.get("uuid")
        if not isinstance(key, str) or not key.strip():
            raise BadFile(where, "field 'uuid' is missing; every exported task has one")
        extra: dict[str, Any] = {k: v for k, v in obj.items() if k not in _MAPPED}
        status = choice(obj.get("status", "pending"), STATUS, where, "status")
        if status == "pending" and obj.get("start"):
            status = "in_progress"
        end = timestamp(obj.get("end"), where, "end")
        fields: dict[str, Any] = {
            "description": description(obj.get("description"), extra, "description", where),
            "status": status,
            "priority": choice(obj.get("priority") or "", PRIORITY, where, "priority"),
            "created_at": timestamp(obj.get("entry"), where, "entry"),
            "updated_at": timestamp(obj.get("modified"), where, "modified"),
            "started_at": timestamp(obj.get("start"), where, "start"),
            "completed_at": end if status == "done" else None,
            "abandoned_at": end if status == "abandoned" else None,
            "abandoned_reason": _reason(obj) if status == "abandoned" else None,
        }
        if obj.get("status") in ("waiting", "recurring"):
            extra["status"] = obj["status"]
        raw_tags = obj.get("tags") or []
        if not isinstance(raw_tags, list):
            raise BadFile(where, "field 'tags' must be a list")
        fields["tags"] = tags(raw_tags, extra, "tags")
        same = obj.get("aidp_id")
        depends = obj.get("depends") or []
        if isinstance(depends, str):  # Taskwarrior before 2.6: "uuid,uuid"
            depends = depends.split(",")
        parent = obj.get("aidp_parent")  # an export of aidp's: the epic's uuid
        if isinstance(parent, str) and parent.strip():
            extra.pop("aidp_parent", None)
        else:
            parent = None
        assignee = assignee_of(obj.get("aidp_assignee"), status, extra, "aidp_assignee")
        given = {kind: obj.get(uda) for kind, uda in UDAS.items()
                 if kind != "close_reason" or status == "done"}  # (a reason: of a close)
        held = foreign(given, extra, UDAS)
        items.append(Incoming(key.strip(), build_task(fields), extra, line=number,
                              same_as=same if isinstance(same, str) else None,
                              blocked_by=[d.strip() for d in depends
                                          if isinstance(d, str) and d.strip()],
                              parent=parent.strip() if parent else None, assignee=assignee,
                              details=held))
    return items


def _reason(obj: dict[str, Any]) -> str | None:
    """Why a deleted task was dropped: the reason an aidp export wrote as its last
    `Abandoned: WHY` annotation (none: none was given), else "Deleted in Taskwarrior"."""
    annotations = obj.get("annotations")
    found = [a["description"][len(ABANDONED):].strip()
             for a in (annotations if isinstance(annotations, list) else ())
             if isinstance(a, dict) and isinstance(a.get("description"), str)
             and a["description"].startswith(ABANDONED)]
    ours = isinstance(obj.get("aidp_id"), str)  # written by an aidp export
    return next((why for why in reversed(found) if why),
                None if ours else "Deleted in Taskwarrior")
