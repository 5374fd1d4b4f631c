"""The JSON shapes aidp prints, in one place: docs/reference.md "JSON output" lists them
and tests/test_json_contract.py holds every `--json` command to them.

A shape is plain data checked by `check(value, shape)`: a Python type (`str`, `int`,
`bool`, None for null), `Enum(...)`, `Either(...)`, `[shape]` (an array of it) or
`Obj(required, optional)` (an object with exactly these keys: the required ones always,
the optional ones only when set). No JSON Schema library: the shapes are small, and a
hand-checked shape gives a message naming the path that drifted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")  # what aidp writes


@dataclass(frozen=True)
class Enum:
    values: tuple[Any, ...]

    def __init__(self, *values: Any) -> None:
        object.__setattr__(self, "values", values)


@dataclass(frozen=True)
class Either:
    shapes: tuple[Any, ...]

    def __init__(self, *shapes: Any) -> None:
        object.__setattr__(self, "shapes", shapes)


@dataclass(frozen=True)
class Obj:
    required: dict[str, Any]
    optional: dict[str, Any] = field(default_factory=dict)

    def extend(self, required: dict[str, Any] | None = None,
               optional: dict[str, Any] | None = None) -> Obj:
        return Obj({**self.required, **(required or {})},
                   {**self.optional, **(optional or {})})


class Stamp:
    """An ISO-8601 UTC time as aidp writes it (`2026-11-22T02:25:33.123456Z`)."""


def problems(value: Any, shape: Any, path: str = "$") -> list[str]:
    """Every way `value` departs from `shape`, each naming its JSON path."""
    if shape is None:
        return [] if value is None else [f"{path}: expected null, got {value!r:.60}"]
    if shape is Stamp:
        ok = isinstance(value, str) and STAMP.match(value)
        return [] if ok else [f"{path}: expected a UTC time, got {value!r:.60}"]
    if isinstance(shape, type):
        # bool is an int in Python; JSON keeps them apart
        ok = isinstance(value, shape) and (shape is bool or not isinstance(value, bool))
        return [] if ok else [f"{path}: expected {shape.__name__}, got {value!r:.60}"]
    if isinstance(shape, Enum):
        return [] if value in shape.values else [f"{path}: {value!r:.60} not in {shape.values}"]
    if isinstance(shape, Either):
        found = [problems(value, s, path) for s in shape.shapes]
        return [] if any(not p for p in found) else min(found, key=len)
    if isinstance(shape, list):
        if not isinstance(value, list):
            return [f"{path}: expected an array, got {value!r:.60}"]
        return [p for i, v in enumerate(value) for p in problems(v, shape[0], f"{path}[{i}]")]
    if isinstance(shape, Obj):
        if not isinstance(value, dict):
            return [f"{path}: expected an object, got {value!r:.60}"]
        out = [f"{path}: missing key {k!r}" for k in shape.required if k not in value]
        for key, v in value.items():
            sub = shape.required.get(key, shape.optional.get(key, KeyError))
            if sub is KeyError:
                out.append(f"{path}: undocumented key {key!r}")
            else:
                out += problems(v, sub, f"{path}.{key}")
        return out
    raise TypeError(f"not a shape: {shape!r}")


def check(value: Any, shape: Any) -> None:
    found = problems(value, shape)
    assert not found, "JSON output drifted from docs/reference.md:\n" + "\n".join(found)


# --- tasks (file-format.md "Task records", reference.md "JSON output") -------------

TASK_ID = str
STATUS = Enum("pending", "in_progress", "done", "abandoned")
PRIORITY = Enum("high", "medium", "low")

NOTE = Obj({"text": str}, {"author": str, "created_at": Stamp})

TASK = Obj(
    {"id": TASK_ID, "description": str, "status": STATUS, "priority": PRIORITY,
     "created_at": Stamp, "updated_at": Stamp, "tags": [str]},
    {"session": str, "discovered_during": str, "started_at": Stamp, "completed_at": Stamp,
     "abandoned_at": Stamp, "abandoned_reason": str,
     # the work queue's keys, only when set (reference.md "JSON output")
     "blocked_by": [TASK_ID], "parent": TASK_ID, "assignee": str, "claimed_at": Stamp,
     # a claim's lease (docs/guide.md, "Leases"): its end, and `stale` once it ran out
     "lease_until": Stamp, "stale": bool,
     "notes": [NOTE],
     # file-format.md "Body, type and close reason": records of their own, only when set
     # (`body` only where a task is shown whole: show, add, edit, list --with-body)
     "task_type": Enum("bug", "feature", "chore", "epic"), "close_reason": str,
     "body": str},
)
TASKS = [TASK]
TASK_OR_TASKS = Either(TASK, TASKS)  # start/done/reopen/release: an array for several ids
# `tasks show --json`: also what the task blocks and its children, only when set
TASK_SHOWN = TASK.extend(optional={"blocks": [TASK_ID], "children": [TASK_ID]})
BLOCKED = [TASK.extend(required={"waiting_on": [TASK_ID]})]
NOTE_ADDED = NOTE.extend(required={"task": TASK_ID})

_COUNT_ROW = {"filed": int, "done": int, "abandoned": int, "finished": int}
STATS = Obj({
    "total": int, "pending": int, "in_progress": int, "done": int, "abandoned": int,
    "other": int, "open": int,
    "open_by_priority": Obj({"high": int, "medium": int, "low": int, "other": int}),
    "oldest_open": Either(TASK_ID, None),
    "weeks": [Obj({"week": str, "start": str, **_COUNT_ROW})],
    "open_age": [Obj({"bucket": str, "min_days": Either(int, None),
                      "max_days": Either(int, None), "count": int})],
    "top_tags": [Obj({"tag": str, "count": int})],
    "filters": Obj({"since": Either(str, None), "session": Either(str, None),
                    "tags": [str]}),
})

IMPORTED = Obj({"source": str, "dry_run": bool, "filed": TASKS, "skipped": int})
REPAIRED = Obj({"dry_run": bool, "lines": int, "kept": int, "damaged": int,
                "damaged_lines": [int], "reasons": [Obj({"line": int, "why": str})],
                "blank": int, "rewritten": bool,
                "backup": Either(str, None)})
COMPACTED = Obj({"lines": int, "kept": int, "damaged": int, "unknown": int,
                 "rewritten": bool, "backup": Either(str, None)})

CHANGES = Obj({
    "from": Either(str, None), "to": Either(str, None), "filed": TASKS,
    "status": [Obj({"id": TASK_ID, "description": str, "from": Either(STATUS, None),
                    "to": STATUS})],
    "edited": [Obj({"id": TASK_ID, "description": str,
                    "fields": Obj({}, {k: Obj({"from": object, "to": object}) for k in
                                       ("description", "priority", "tags", "task_type",
                                        "body")})})],
    "removed": [Obj({"id": TASK_ID, "description": str})],
    "todo": [Obj({"session": str, "added": int, "completed": int, "changed": int,
                  "removed": int, "active": bool, "paused": bool})],
    # the work queue's records and records of other kinds (issue 35: never nothing)
    "notes": [Obj({"id": Either(TASK_ID, None), "description": Either(str, None),
                   "text": str, "author": Either(str, None)})],
    "links": [Obj({"id": Either(TASK_ID, None), "description": Either(str, None),
                   "kind": Enum("blocked_by", "parent"), "other": Either(TASK_ID, None),
                   "removed": bool})],
    "claims": [Obj({"id": Either(TASK_ID, None), "description": Either(str, None),
                    "assignee": str, "released": bool})],
    "other": [Obj({"type": str, "record": str, "id": Either(str, None)})],
    "lines": Obj({"added": int, "removed": int}),
    "summary": str,
    # what merges in the range replaced (docs/guide.md `aidp tasks changes`)
    "overwritten": [Obj({
        "id": TASK_ID, "description": Either(str, None),
        "field": Enum("description", "priority", "status", "tags", "task_type", "body"),
        "side": Enum("ours", "theirs"), "lost": object, "kept": object,
    }, {"tag": str, "claim_lost": bool, "lost_by": str, "kept_by": str, "merge": str})],
})

# --- TODO lists (docs/todo.md "JSON") ---------------------------------------------------

SUBTASK = Obj({"id": str, "content": str, "status": Enum("pending", "completed")})
ITEM = Obj({"id": str, "content": str, "status": Enum("pending", "in_progress", "completed"),
            "priority": PRIORITY, "subtasks": [SUBTASK]})
TODO = Obj({"session": str, "active": bool, "paused": bool, "items": [ITEM]})
TODO_SUMMARY = Obj({
    "session": str, "current": bool, "updated_at": Either(Stamp, None), "active": bool,
    "items": int,
    "counts": Obj({"pending": int, "in_progress": int, "completed": int}),
    "first": Either(str, None),
}, {"owner": str, "list": str})
TODO_LIST = [TODO_SUMMARY]

# --- init and run (docs/reference.md "JSON output") --------------------------------------

INIT = Obj({
    "root": str, "tasklist": str, "created": bool, "link": Either(str, None),
    "gitattributes": Obj({"path": str, "added": [str], "override": Either(str, None)}),
    "git": Obj({"repository": bool, "diff_driver_set": bool, "tasklist_ignored": bool}),
})
RUN_EXIT_REASONS = Enum("done", "progress", "paused", "continuations_used_up", "timeout",
                        "agent_failed", "nothing_to_resume", "interrupted", "backlog_done")
RUN = Obj({
    "session": str, "exit_code": int, "exit_reason": RUN_EXIT_REASONS, "invocations": int,
    "continuations": int, "tasks_filed": [TASK_ID], "tasks_not_filed": [TASK_ID],
    "tasks_updated": [TASK_ID],
})

# --- agents' integration (docs/agents.md) -----------------------------------------------

PRIME_TASK = Obj({"id": TASK_ID, "description": str, "status": STATUS, "priority": PRIORITY,
                  "tags": [str]}, {"assignee": str, "lease_until": Stamp, "stale": bool})
PRIME = Obj({
    "session": str,
    "todo": TODO.extend(required={"items_left_out": int}),
    "in_progress": [PRIME_TASK], "in_progress_count": int,
    "ready": [PRIME_TASK], "ready_count": int, "pending_count": int,
    "commands": [str], "other_open_lists": TODO_LIST, "text": str,
}, {  # the task this session works on (docs/agents.md `aidp prime`)
    "claimed": PRIME_TASK.extend(optional={"task_type": str, "body": str,
                                           "body_left_out": int}),
})
BOARD = Obj({"url": str, "port": int})  # aidp board --json: its one start-up line

AGENTS = [Obj({
    "name": str, "command": str, "program": str, "path": Either(str, None),
    "installed": bool, "version": Either(str, None),
    "version_from": Either(Enum("package.json", "package metadata", "--version"), None),
    "verified_version": Either(str, None), "verified": bool,
})]
