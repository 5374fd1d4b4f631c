"""The fold rule, in one place: which record a line is, and which record wins.

The state is a pure function of the lines: per id, the record with the greatest
(updated_at, line number) wins. Tasks and typed records (those with a "type" key)
fold into two separate namespaces, so a typed record can never show up as a task.
Both readers — the plain fold (`aidp.log.Fold`) and the snapshot's column builder
(`aidp.index.columns`) — decide through these functions; tests/test_index.py holds
their answers equal on random logs.
"""

from __future__ import annotations

from typing import Any

from aidp.model import ts_of

# (updated_at in µs, line number): the fold's order.
FoldKey = tuple[int, int]

TASK = "task"
TYPED = "typed"
IGNORED = "ignored"  # a typed record without a string id: a kind this version cannot fold
DAMAGED = "damaged"  # a task line without a usable id


def place(record: dict[str, Any]) -> tuple[str, str]:
    """(namespace, id) of a parsed record: TASK or TYPED with its id, or IGNORED or
    DAMAGED with an empty id."""
    rid = record.get("id")
    if "type" in record:
        return (TYPED, rid) if isinstance(rid, str) else (IGNORED, "")
    if not isinstance(rid, str) or not rid:
        return DAMAGED, ""
    return TASK, rid


def key_of(record: dict[str, Any], line: int) -> FoldKey:
    return (ts_of(record), line)


def beats(key: FoldKey, previous: FoldKey | None) -> bool:
    """Whether a record with `key` replaces the current winner (None: there is none)."""
    return previous is None or key > previous
