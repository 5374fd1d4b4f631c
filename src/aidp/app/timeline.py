"""A task's timeline: its recorded states and its queue records (links, claims, notes,
body, type, close reason) in one list, oldest first, each a time and what happened (the
board's detail panel; `aidp tasks history` prints the same, with lines)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from aidp.app.project import Project
from aidp.core.plain import Plain

if TYPE_CHECKING:
    from aidp.backlog.history import HistoryEntry


class Moment(Plain):
    """One thing that happened to a task: when (`at`, its stamp as written), and `what`
    (`created`, or each changed field as `field: before → after`, or the queue's words
    for a link, claim or note)."""

    _fields = ("at", "what")

    def __init__(self, at: str, what: list[str]) -> None:
        self.at = at
        self.what = what


def _value(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


class History(Plain):
    """What is recorded about a task: its states (`entries`, aidp.backlog.history's:
    each record, what changed, where it is), and its queue records (`events`: (fold
    key, what it says, (the other worktree's tasklist or None, line)): links, claims,
    notes, body, type, close reason), each oldest first."""

    _fields = ("entries", "events")

    def __init__(self, entries: list[HistoryEntry],
                 events: list[tuple[tuple[int, int], str, tuple[Path | None, int]]]) -> None:
        self.entries = entries
        self.events = events


def task_history(project: Project, ref: str, *, events: bool = True) -> History:
    """Every recorded state of the task `ref` names (`aidp tasks history`), and with
    `events` its queue records too, of every worktree."""
    from aidp.backlog import history, queue

    fold = project.read()
    entries = history.history(project.log, ref)
    if not entries or not events:
        return History(entries, [])
    return History(entries, queue.events(project.log, entries[0].record["id"], fold))


def timeline(project: Project, ref: str) -> list[Moment]:
    """Everything recorded about the task `ref` names, oldest first."""
    from aidp.core.model import format_ts

    recorded = task_history(project, ref)
    entries, events = recorded.entries, recorded.events
    found: list[tuple[tuple[int, int], Moment]] = []
    for number, entry in enumerate(entries):
        at = str(entry.record.get("updated_at", "?"))
        if number == 0:
            what = [f"created: {entry.record.get('description', '')}"]
        else:
            what = [f"{key}: {_value(before)} → {_value(after)}"
                    for key, (before, after) in entry.changes.items()] or ["(touched)"]
        found.append((entry.key, Moment(at, what)))
    for key, said, _where in events:
        found.append((key, Moment(format_ts(key[0]), [said])))
    found.sort(key=lambda pair: pair[0])
    return [moment for _key, moment in found]
