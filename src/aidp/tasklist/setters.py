"""What `tasks compact` keeps of a task: the records its fold needs, so that the fold of
the compacted file — alone, in a worktree beside the others, or merged with any other
clone's lines later — is the fold of the whole file (docs/file-format.md "Compaction").

The field-level merge (aidp.tasklist.fields.merge_task) takes each part of a task from
a latest record: the winner (the other keys, `updated_at`), the latest setter of the
description and of the priority, the latest status set of each kind (close, move
between open states, any other), the latest record that set the tags whole, and per
tag the latest add or remove. Each is a maximum over the task's records by fold key,
and a merge only adds records: the maximum over (kept ∪ theirs) is the maximum over
(all ∪ theirs) as long as the kept records hold each of ours. So compact keeps, per
task, the records that hold a maximum, each with its `task_fields` record, and drops
the rest. Fewer still suffice for two parts, whatever a merge adds:
- status: the latest status record, and the later of the latest close and the latest
  other status set (a move between open states only counts when it is the latest; a
  close or an "other" older than its rival never decides: merge_task's rule);
- tags: adds and removes older than the latest whole set never count.
The kept lines stay in their order, so ties on `updated_at` break as before.
"""

from __future__ import annotations

from aidp.core.model import Record
from aidp.tasklist.fold import FoldKey, groups_of, packed, status_class, texts

# One kept candidate: its fold key and its companion's line (0: none), packed in one
# int (fold.packed) ordered as the key: a few tasks' worth of memory per task.
Entry = int


def entry(key: FoldKey, companion: int) -> Entry:
    return packed(key, companion)


def lines_of(found: Entry) -> tuple[int, int]:
    """(line, companion line or 0) of an entry."""
    return (found >> 40) & _MASK, found & _MASK


_MASK = (1 << 40) - 1


class Needed:
    """One task's candidates, updated a record at a time in file order."""

    __slots__ = (
        "closed",
        "description",
        "floor",
        "informed",
        "marks",
        "moved",
        "priority",
        "winner",
    )

    def __init__(self) -> None:
        self.winner = self.description = self.priority = 0  # 0: none yet
        self.closed = self.moved = self.informed = 0  # status: C, B, O (fold.status_class)
        self.floor = 0  # the latest record that set the tags whole (no companion)
        self.marks: dict[str, Entry] | None = None  # tag -> latest add/remove after floor

    def add(self, record: Record, found: Entry, spec: Record | None) -> None:
        """Take one of the task's records (`found`: its entry; `spec`: its companion)."""
        self.winner = max(self.winner, found)
        for group in groups_of(spec):
            if group == "status":
                kind = status_class(record, spec)
                if kind == "C":
                    self.closed = max(self.closed, found)
                elif kind == "B":
                    self.moved = max(self.moved, found)
                else:
                    self.informed = max(self.informed, found)
            elif group == "tags":
                if spec is None:
                    if found > self.floor:
                        self.floor = found
                        if self.marks:  # older marks no longer count
                            self.marks = {t: m for t, m in self.marks.items() if m > found}
                else:
                    for tag in texts(spec, "tags_added"):
                        self._mark(tag, found)
                    for tag in texts(spec, "tags_removed"):
                        self._mark(tag, found)
            elif group == "description":
                self.description = max(self.description, found)
            elif group == "priority":
                self.priority = max(self.priority, found)

    def _mark(self, tag: str, found: Entry) -> None:
        if found < self.floor:
            return
        if self.marks is None:
            self.marks = {}
        if found > self.marks.get(tag, 0):
            self.marks[tag] = found

    def kept(self) -> set[Entry]:
        """The entries whose records the fold needs."""
        status = max(self.closed, self.moved, self.informed)
        out = {self.winner, self.description, self.priority, status,
               max(self.closed, self.informed), self.floor}
        if self.marks:
            out.update(self.marks.values())
        out.discard(0)
        return out

