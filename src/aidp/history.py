"""A task's recorded states, oldest first, with what changed between them."""

from __future__ import annotations

from dataclasses import dataclass

from aidp.log import TaskLog, dumps
from aidp.model import Record, ts_of
from aidp.tasks import resolve_id


@dataclass
class HistoryEntry:
    record: Record
    line: int
    changes: dict[str, tuple[object, object]]  # key -> (before, after); all keys for the first


def history(log: TaskLog, ref: str) -> list[HistoryEntry]:
    """Every recorded state of one task, in fold order (oldest first), equal states once."""
    fold = log.read()
    tid = resolve_id(fold.tasks, ref)
    states: list[tuple[tuple[int, int], Record]] = []
    seen: set[bytes] = set()
    for number, _raw, record in log.scan():
        if record is None or "type" in record or record.get("id") != tid:
            continue
        fingerprint = dumps(dict(sorted(record.items())))
        if fingerprint in seen:
            continue
        seen.add(fingerprint)
        states.append(((ts_of(record), number), record))
    states.sort(key=lambda pair: pair[0])
    entries: list[HistoryEntry] = []
    previous: Record = {}
    for (_ts, line), record in states:
        changes = {
            key: (previous.get(key), record.get(key))
            for key in dict.fromkeys([*previous, *record])
            if previous.get(key) != record.get(key) and key != "updated_at"
        }
        entries.append(HistoryEntry(record, line, changes))
        previous = record
    return entries

