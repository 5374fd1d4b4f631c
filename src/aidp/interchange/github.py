"""GitHub issues as `gh issue list --json number,title,state,labels,body,createdAt`
prints them (a JSON array; `--state all` for closed ones too).

state OPEN → pending, CLOSED → done (abandoned when `stateReason` is NOT_PLANNED);
labels become tags, and a label naming a priority (high/critical/urgent/P0/P1,
low/minor/P3/P4, optionally as `priority: high` or `priority/high`) sets the
priority (else medium). `createdAt` is created_at; a closed issue finishes at
`closedAt` when the list has it, else `updatedAt`, else `createdAt`. The number
(with `url` when present) is the source key; the body (Markdown) is the task's body
(one over 64 KiB or with control characters stays in the note), other fields go to the
note. Import only: aidp does not write to GitHub."""

from __future__ import annotations

import re
from typing import Any

import orjson

from aidp.backlog.details import foreign
from aidp.interchange import (
    BadFile,
    Incoming,
    build_task,
    choice,
    description,
    tags,
    timestamp,
)

STATE = {"open": "pending", "closed": "done"}
_PRIORITY_LABEL = re.compile(r"(?:priority[\s:/_-]*|prio[\s:/_-]*)?(\w+)", re.IGNORECASE)
_LEVELS = {"high": "high", "critical": "high", "urgent": "high", "p0": "high",
           "p1": "high", "medium": "medium", "normal": "medium", "p2": "medium",
           "low": "low", "minor": "low", "p3": "low", "p4": "low"}
_MAPPED = {"number", "title", "state", "labels", "createdAt", "updatedAt", "closedAt",
           "stateReason"}


def _priority(labels: list[str]) -> str | None:
    for label in labels:
        match = _PRIORITY_LABEL.fullmatch(label.strip())
        if match and match.group(1).lower() in _LEVELS:
            return _LEVELS[match.group(1).lower()]
    return None


def parse(text: str, name: str) -> list[Incoming]:
    stripped = text.strip()
    if not stripped:
        return []
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError as exc:
        pos = getattr(exc, "pos", None)
        line = text.count("\n", 0, pos) + 1 if isinstance(pos, int) else 1
        raise BadFile(f"{name}: line {line}", "is not valid JSON (gh issue list --json … "
                                              "prints one array)") from None
    if not isinstance(value, list):
        raise BadFile(name, "is not a JSON array of issues (gh issue list --json number,"
                            "title,state,labels,body,createdAt)")
    items = []
    for n, obj in enumerate(value, start=1):
        where = f"{name}: issue {n}"
        if not isinstance(obj, dict):
            raise BadFile(where, "is not a JSON object")
        number = obj.get("number")
        if isinstance(number, bool) or not isinstance(number, int):
            raise BadFile(where, "field 'number' is missing; list issues with "
                                 "--json number,title,state,labels,body,createdAt")
        where = f"{name}: issue #{number}"
        extra: dict[str, Any] = {k: v for k, v in obj.items()
                                 if k not in _MAPPED and v not in (None, "", [], {})}
        raw_labels = obj.get("labels") or []
        if not isinstance(raw_labels, list):
            raise BadFile(where, "field 'labels' must be a list")
        names = [n for n in (label.get("name") if isinstance(label, dict) else label
                             for label in raw_labels) if isinstance(n, str)]
        status = choice(str(obj.get("state", "")), STATE, where, "state")
        if status == "done" and str(obj.get("stateReason", "")).upper() == "NOT_PLANNED":
            status = "abandoned"
        created = timestamp(obj.get("createdAt"), where, "createdAt")
        updated = timestamp(obj.get("updatedAt"), where, "updatedAt")
        closed = timestamp(obj.get("closedAt"), where, "closedAt") or updated or created
        fields = {
            "description": description(obj.get("title"), extra, "title", where),
            "status": status,
            "priority": _priority(names),
            "created_at": created,
            "updated_at": updated,
            "completed_at": closed if status == "done" else None,
            "abandoned_at": closed if status == "abandoned" else None,
            "abandoned_reason": "Closed as not planned on GitHub"
            if status == "abandoned" else None,
            "tags": tags(names, extra, "labels"),
        }
        url = obj.get("url")
        key = url if isinstance(url, str) and url else f"#{number}"
        body = foreign({"body": obj.get("body")}, extra, {"body": "body"})
        items.append(Incoming(key, build_task(fields), extra, line=n, details=body))
    return items
