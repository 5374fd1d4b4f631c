"""A task's recorded states, oldest first, with what changed between them; `undo`
appends the state before the current one again (the log stays append-only)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aidp.backlog.ids import resolve_id
from aidp.core.errors import AidpError
from aidp.core.model import Record, format_ts, next_updated_at, parse_ts, ts_of
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


def _states(log: TaskLog, tid: str, fields: list[tuple[tuple[int, int], Record]] | None = None
            ) -> list[HistoryEntry]:
    """The task's states (see history); with `fields`, its body and type records are
    added to that list too, ((updated_at µs, place), record), oldest first, equal
    records once: one pass over the lines for both."""
    from aidp.backlog import details
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
        if fields is not None and record.get("type") in (details.BODY, details.TYPE) \
                and record.get("task") == tid and record.get("id") == details.record_id(
                    str(record["type"]), tid):
            fingerprint = dumps(dict(sorted(record.items())))
            if fingerprint not in seen:
                seen.add(fingerprint)
                fields.append(((ts_of(record), order), record))
        if "type" in record or record.get("id") != tid:
            continue
        spec = waiting.pop(record.get("updated_at"), None)
        fingerprint = dumps(dict(sorted(record.items())))
        if fingerprint in seen:
            continue
        seen.add(fingerprint)
        states.append(((ts_of(record), order), record, spec, (source, number)))
    states.sort(key=lambda entry: entry[0])
    if fields is not None:
        fields.sort(key=lambda entry: entry[0])
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
    task: Record  # the task now: the state appended (the one before the current, with a
    # fresh updated_at), or as it was when only its body or type went back
    changes: dict[str, tuple[object, object]]  # key -> (current, restored); `body`, `type`


# What undo takes back besides the task's record: its body and type (records of their
# own, aidp.backlog.details), by the names `history` gives them, and their values when
# a task has no such record.
_FIELD_NAMES = {"body": "body", "task_type": "type"}
_DEFAULTS = {"body": "", "task_type": "task"}


def _field_changes(fields: list[tuple[tuple[int, int], Record]], created: int
                   ) -> list[tuple[int, str, str, str]]:
    """(stamp µs, kind, value before, value after) of each body or type record that
    changed the field, oldest first; those filed with the task (stamped with its
    creation, or before) are where it started, not a change."""
    from aidp.backlog import details

    out = []
    value = dict(_DEFAULTS)
    for (stamp, _order), record in fields:
        kind = str(record["type"])
        after = details.value_of(record, kind, _DEFAULTS[kind])
        if after != value[kind] and stamp > created:
            out.append((stamp, kind, value[kind], after))
        value[kind] = after
    return out


def undo(log: TaskLog, ref: str) -> Undone:
    """Take back the task's last change, as `history` lists it: its record, its body or
    its type. The last change is the latest of (a) the task's record: the latest
    recorded state that differs from the one before it, and (b) a body or type record
    that changed the field; one write (`tasks edit` with a priority and a body) stamps
    all its records alike, and all of them go back together. A record goes back by
    appending the latest state before the current one that differs from it; a body or
    type by appending the value it had before. `history` then shows the undo as a change
    like any other, and a second undo goes back to where the first began. Back to
    pending, nobody holds the task any more (like `reopen`). Links, claims and notes are
    not taken back (`unblock`, `release`)."""
    from aidp.backlog import details

    result: list[Undone] = []

    def change(fold: Fold) -> list[Record]:
        tid = resolve_id(fold, ref)
        current = fold.tasks[tid]
        fields: list[tuple[tuple[int, int], Record]] = []
        states = _states(log, tid, fields)
        # The current state is the last of them (the fold's winner); undo skips the
        # ones that differ from it only in time.
        earlier = [e.state or e.record for e in states if _changes(e.state or e.record, current)]
        changed = [e.key[0] for e in states[1:] if e.changes]
        task_at = changed[-1] if changed and earlier else None
        created = states[0].key[0] if states else 0
        field_changes = _field_changes(fields, created)
        last = max([*([task_at] if task_at is not None else []),
                    *(stamp for stamp, *_rest in field_changes)], default=None)
        if last is None:
            raise NothingToUndo(f"Nothing to undo: task {tid} has no earlier state "
                                "(see 'aidp tasks history')")
        written: list[Record] = []
        shown, undone = current, {}
        if task_at == last:
            restored = dict(earlier[-1])
            restored["updated_at"] = format_ts(next_updated_at(current))
            shown, undone = restored, _changes(current, restored)
            written.append(restored)
        have = details.current(fold, tid)
        for kind in dict.fromkeys(k for stamp, k, _b, _a in field_changes if stamp == last):
            before = next(b for stamp, k, b, _a in reversed(field_changes)
                          if stamp == last and k == kind)
            now = details.value_of(have.get(kind), kind, _DEFAULTS[kind])
            if before != now:
                written.append(details.record(kind, tid, before, format_ts(
                    next_updated_at(have.get(kind)))))
                undone[_FIELD_NAMES[kind]] = (now, before)
        if not written:
            raise NothingToUndo(f"Nothing to undo: task {tid}'s last change is taken back "
                                "already (see 'aidp tasks history')")
        stamp = max((r["updated_at"] for r in written), key=lambda at: parse_ts(at) or 0)
        for record in written:  # one change, one stamp: a second undo takes it all back
            record["updated_at"] = stamp
        result[:] = [Undone(shown, undone)]
        if shown.get("status") == "pending" and current.get("status") != "pending":
            from aidp.backlog.queue import release_records

            written.extend(release_records(fold, tid))
        return written

    log.update(change)
    return result[0]
