"""A task's recorded states, oldest first, with what changed between them; `undo`
appends the state before the current one again (the log stays append-only)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aidp.backlog.ids import resolve_id
from aidp.core.errors import AidpError
from aidp.core.model import Record, format_ts, next_updated_at, ts_of
from aidp.tasklist import worktrees
from aidp.tasklist.log import Fold, TaskLog, dumps


@dataclass
class HistoryEntry:
    record: Record
    line: int
    changes: dict[str, tuple[object, object]]  # key -> (before, after); all keys for the first
    # The task as folded after this record (field-level merge: a record with a
    # task_fields record changes only the fields that names); None: the record itself.
    state: Record | None = None
    # Another worktree's tasklist, when the record is only there (docs/guide.md,
    # "Worktrees by hand"); None: this worktree's, at `line`.
    source: Path | None = None
    key: tuple[int, int] = (0, 0)  # (updated_at µs, place in the fold's order): oldest first


class NothingToUndo(AidpError):
    """The task has no earlier state to go back to (exit 1)."""


def history(log: TaskLog, ref: str) -> list[HistoryEntry]:
    """Every recorded state of one task, in fold order (oldest first), equal states once."""
    fold = log.read()
    return _states(log, resolve_id(fold, ref))


def _states(log: TaskLog, tid: str) -> list[HistoryEntry]:
    from aidp.tasklist.fields import merge_task
    from aidp.tasklist.fold import FIELDS

    states: list[tuple[tuple[int, int], Record, Record | None, tuple[Path | None, int]]] = []
    seen: set[bytes] = set()
    waiting: dict[object, Record] = {}  # the task's task_fields records by updated_at
    for order, source, number, record in worktrees.records(log.shared(), log.read_lines()):
        if record is None:
            continue
        if record.get("type") == FIELDS and record.get("task") == tid:
            waiting[record.get("updated_at")] = record
        if "type" in record or record.get("id") != tid:
            continue
        spec = waiting.pop(record.get("updated_at"), None)
        fingerprint = dumps(dict(sorted(record.items())))
        if fingerprint in seen:
            continue
        seen.add(fingerprint)
        states.append(((ts_of(record), order), record, spec, (source, number)))
    states.sort(key=lambda entry: entry[0])
    entries: list[HistoryEntry] = []
    previous: Record = {}
    for at, (key, record, _spec, (source, number)) in enumerate(states):
        now = merge_task([(r, k, c) for k, r, c, _where in states[: at + 1]])
        entries.append(HistoryEntry(record, number, _changes(previous, now), now, source, key))
        previous = now
    return entries


def _changes(before: Record, after: Record) -> dict[str, tuple[object, object]]:
    return {key: (before.get(key), after.get(key)) for key in dict.fromkeys([*before, *after])
            if before.get(key) != after.get(key) and key != "updated_at"}


@dataclass
class Undone:
    task: Record  # the state appended: the one before the current, with a fresh updated_at
    changes: dict[str, tuple[object, object]]  # key -> (current, restored)


def undo(log: TaskLog, ref: str) -> Undone:
    """Append the task's previous state again: the latest recorded state before the
    current one that differs from it in more than updated_at. `history` then shows it
    as a change like any other, and a second undo goes back to where the first began.
    Back to pending, nobody holds the task any more (like `reopen`)."""
    result: list[Undone] = []

    def change(fold: Fold) -> list[Record]:
        tid = resolve_id(fold, ref)
        current = fold.tasks[tid]
        # The current state is the last of them (the fold's winner); undo skips the
        # ones that differ from it only in time.
        earlier = [e.state or e.record for e in _states(log, tid)
                   if _changes(e.state or e.record, current)]
        if not earlier:
            raise NothingToUndo(f"Nothing to undo: task {tid} has no earlier state "
                                "(see 'aidp tasks history')")
        restored = dict(earlier[-1])
        restored["updated_at"] = format_ts(next_updated_at(current))
        result[:] = [Undone(restored, _changes(current, restored))]
        written = [restored]
        if restored.get("status") == "pending" and current.get("status") != "pending":
            from aidp.backlog.queue import release_records

            written.extend(release_records(fold, tid))
        return written

    log.update(change)
    return result[0]
