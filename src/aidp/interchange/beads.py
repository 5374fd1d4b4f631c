"""Beads' issues JSONL (`.beads/issues.jsonl`): one issue per line.

status: open, blocked, deferred, pinned, hooked → pending; in_progress → in_progress;
closed → done, or, in an export of aidp's (its `external_ref` an aidp id), abandoned when
its close_reason is the one the export writes for an abandoned task (`abandoned: WHY`;
a done task's own reason that reads so, or starts `done: `, goes out behind `done: `,
taken off again on import); tombstone → abandoned. priority 0–1 → high, 2 →
medium, 3–4 → low. `title` is the description, `labels` the tags; created_at/
updated_at/closed_at keep their meaning; `blocks` and `parent-child` dependencies
become the work queue's links, the assignee of an issue that is not open its claim;
`description` is the task's body, `issue_type` its type (task, bug, feature, chore,
epic), a closed issue's `close_reason` its close reason (one aidp cannot keep so — a
body over 64 KiB, another type — stays in the note). Everything else (comments,
design, acceptance_criteria…) is kept in the import note. Export writes
`aidp-<hex>` ids and the aidp id as `external_ref`, which an import of that file
recognises, the body as `description`, the type as `issue_type` (`epic` too for a task
with children), the close reason, and the work queue: blockers as `blocks`
dependencies, the epic as a `parent-child` one, the assignee, notes as comments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from aidp.backlog.details import foreign
from aidp.core.model import TASK_ID_RE, Record
from aidp.interchange import (
    BadFile,
    Incoming,
    assignee_of,
    build_task,
    choice,
    description,
    json_lines,
    tags,
    timestamp,
)

STATUS = {
    **dict.fromkeys(("open", "blocked", "deferred", "pinned", "hooked"), "pending"),
    "in_progress": "in_progress", "closed": "done", "tombstone": "abandoned",
}
PRIORITY = {"0": "high", "1": "high", "2": "medium", "3": "low", "4": "low"}
TO_PRIORITY = {"high": 1, "medium": 2, "low": 3}
TO_STATUS = {"pending": "open", "in_progress": "in_progress", "done": "closed",
             "abandoned": "closed"}
ABANDONED = "abandoned"  # how an export of aidp's closes an abandoned task: its reason
DONE = "done: "  # before a done task's own reason that would read as ABANDONED (or DONE)
_MAPPED = {"id", "title", "status", "priority", "labels", "created_at", "updated_at",
           "closed_at"}


def _bid(tid: object) -> str:
    return "aidp-" + str(tid).rpartition("_")[2]


def dump(tasks: Sequence[Record]) -> bytes:
    """`tasks` as issues; the work queue's keys (queue.with_extras) when they have them."""
    epics = {t["parent"] for t in tasks if isinstance(t.get("parent"), str)}
    lines = []
    for task in tasks:
        tid = str(task.get("id", ""))
        status = task.get("status")
        issue: dict[str, Any] = {
            "id": _bid(tid),
            "title": task.get("description", ""),
            "status": TO_STATUS.get(str(status), "open"),
            "priority": TO_PRIORITY.get(str(task.get("priority")), 2),
            "description": task.get("body"),
            "issue_type": task.get("task_type") or ("epic" if tid in epics else "task"),
            "created_at": task.get("created_at"),
            "updated_at": task.get("updated_at"),
        }
        if status in ("done", "abandoned"):
            issue["closed_at"] = task.get("completed_at") or task.get("abandoned_at") \
                or task.get("updated_at")
        if status == "abandoned":
            issue["close_reason"] = ABANDONED + (
                f": {task['abandoned_reason']}" if task.get("abandoned_reason") else "")
        elif status == "done":
            issue["close_reason"] = _escaped(task.get("close_reason"))
        if task.get("tags"):
            issue["labels"] = list(task["tags"])
        issue.update(_queue(task, issue["id"]))
        issue["external_ref"] = tid
        lines.append(orjson.dumps({k: v for k, v in issue.items() if v is not None}))
    return b"".join(line + b"\n" for line in lines)


def _queue(task: Record, bid: str) -> dict[str, Any]:
    """The work queue in Beads' own fields: dependencies, assignee, comments."""
    out: dict[str, Any] = {}
    deps = [{"issue_id": bid, "depends_on_id": _bid(b), "type": "blocks"}
            for b in task.get("blocked_by") or ()]
    if isinstance(task.get("parent"), str):
        deps.append({"issue_id": bid, "depends_on_id": _bid(task["parent"]),
                     "type": "parent-child"})
    if deps:
        out["dependencies"] = deps
    if isinstance(task.get("assignee"), str):
        out["assignee"] = task["assignee"]
    comments = [{"id": n, "issue_id": bid, "author": note.get("author", ""),
                 "text": note["text"], "created_at": note.get("created_at")}
                for n, note in enumerate(task.get("notes") or (), start=1)]
    if comments:
        out["comments"] = [{k: v for k, v in c.items() if v is not None} for c in comments]
    return out


def _links(dependencies: object, key: str) -> tuple[list[str], str | None]:
    """What the issue waits on (`blocks` edges) and its epic (`parent-child`)."""
    blockers: list[str] = []
    parent = None
    for dep in dependencies if isinstance(dependencies, list) else []:
        if not isinstance(dep, dict) or dep.get("issue_id", key) != key:
            continue
        target = dep.get("depends_on_id")
        if not isinstance(target, str):
            continue
        if dep.get("type", "blocks") == "blocks":
            blockers.append(target)
        elif dep.get("type") == "parent-child":
            parent = target
    return blockers, parent


def parse(text: str, name: str) -> list[Incoming]:
    items = []
    for number, where, obj in json_lines(
            text, name, hint="Beads' issues.jsonl has one issue per line",
            not_object="is not a JSON object (a Beads issue)"):
        key = obj.get("id")
        if not isinstance(key, str) or not key.strip():
            raise BadFile(where, "field 'id' is missing; every Beads issue has one")
        extra: dict[str, Any] = {k: v for k, v in obj.items() if k not in _MAPPED}
        status = choice(obj.get("status", "open"), STATUS, where, "status")
        if obj.get("status") not in ("open", "in_progress", "closed"):
            extra["status"] = obj.get("status")
        reason = "Deleted in Beads" if status == "abandoned" else None
        ref = obj.get("external_ref")
        same = ref if isinstance(ref, str) and TASK_ID_RE.fullmatch(ref) else None
        closing = obj.get("close_reason")
        if status == "done" and same is not None and isinstance(closing, str):
            said = _abandoned(closing)  # closed by an export of aidp's
            if closing.startswith(DONE):
                closing = closing[len(DONE):]  # a done task's reason, escaped
            elif said is not None:
                status, reason = "abandoned", said or None
                extra.pop("close_reason", None)
        priority = obj.get("priority", 2)
        if isinstance(priority, bool) or not isinstance(priority, (int, str)):
            raise BadFile(where, f"field 'priority' has an unknown value {priority!r}; "
                                 "accepted: 0, 1, 2, 3, 4")
        closed = timestamp(obj.get("closed_at"), where, "closed_at")
        labels = obj.get("labels") or []
        if not isinstance(labels, list):
            raise BadFile(where, "field 'labels' must be a list")
        fields = {
            "description": description(obj.get("title"), extra, "title", where),
            "status": status,
            "priority": choice(str(priority), PRIORITY, where, "priority"),
            "created_at": timestamp(obj.get("created_at"), where, "created_at"),
            "updated_at": timestamp(obj.get("updated_at"), where, "updated_at"),
            "completed_at": closed if status == "done" else None,
            "abandoned_at": closed if status == "abandoned" else None,
            "abandoned_reason": reason,
            "tags": tags(labels, extra, "labels"),
        }
        blockers, parent = _links(obj.get("dependencies"), key.strip())
        given = {"body": obj.get("description"), "task_type": obj.get("issue_type")}
        if status == "done":  # (a deleted issue's reason stays in the note)
            given["close_reason"] = closing
        kept = foreign(given, extra, {"body": "description", "task_type": "issue_type",
                                   "close_reason": "close_reason"})
        assignee = assignee_of(obj.get("assignee"), status, extra, "assignee")
        items.append(Incoming(key.strip(), build_task(fields), extra, line=number,
                              same_as=same, blocked_by=blockers, parent=parent,
                              details=kept, assignee=assignee))
    return items


def _escaped(close_reason: object) -> object:
    """A done task's close reason as an export writes it: behind DONE when it would
    otherwise read as an abandoned task's (or as escaped itself)."""
    if isinstance(close_reason, str) and (
            close_reason.startswith(DONE) or _abandoned(close_reason) is not None):
        return DONE + close_reason
    return close_reason


def _abandoned(close_reason: str) -> str | None:
    """The abandon reason an aidp export wrote as `close_reason` ("abandoned" or
    "abandoned: WHY": "" or WHY); None for any other close reason (a close: done)."""
    text = close_reason.strip()
    if text == ABANDONED:
        return ""
    if text.startswith(ABANDONED + ":"):
        return text[len(ABANDONED) + 1:].strip()
    return None
