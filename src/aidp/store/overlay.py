"""Every worktree's tasklist through this worktree's store (the rule and the plan:
aidp.worktrees): the others' lines folded on top by the fill, in a transaction the fold
keeps open and never commits (it holds the store's write lock until the fold is dropped).
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

import orjson

from aidp import worktrees
from aidp.store import db
from aidp.store.fill import Filler
from aidp.store.loader import attempt

if TYPE_CHECKING:
    from pathlib import Path

    from aidp.fold import Fold
    from aidp.log import TaskLog
    from aidp.store.view import StoreFold


class _Merged(Exception):
    """A task two worktrees changed concurrently: the plain fold merges it."""


class _Overlay(Filler):
    def _merge(self, rid: str, end: int) -> Any:  # its lines are in several files
        raise _Merged


def load_shared(log: TaskLog, tasklists: list[tuple[Path, bool]], *,
                whole_lines: bool = False) -> Fold | None:
    """The fold of every worktree's tasklist (worktrees.fold), or None: fold plainly."""
    plan = worktrees.plan(tasklists, log.path, db.folder(log.dir, create=False),
                          whole_lines=whole_lines)
    if plan is None:
        return None

    def apply(conn: sqlite3.Connection, meta: dict[str, Any], fold: StoreFold, fd: int
              ) -> bool:
        if meta["offset"] != plan.end:
            return False  # the file grew since the plan: fold plainly
        common, shift = meta["lines"] - plan.own_lines, len(plan.before)
        conn.execute("BEGIN")
        if shift:  # the lines fed before this file's own: its own move down
            for table in ("task", "typed", "tag"):
                conn.execute(f"UPDATE {table} SET seq = -seq - ? WHERE seq > ?",
                             (shift, common))
                conn.execute(f"UPDATE {table} SET seq = -seq WHERE seq < 0")
            for table in ("task", "typed"):
                conn.executemany(f"UPDATE {table} SET line = line + ? WHERE id = ? AND "
                                 "line > ?", [(shift, rid, common) for rid in plan.own_ids])
        pending = meta.get("pending")
        fill = _Overlay(conn, common, 0, empty=False, fielded=bool(meta.get("fielded")),
                        pending={(t, u): r for t, u, r in orjson.loads(pending)}
                        if pending else None)
        fill.fd = fd  # the store's winners are read from this log
        try:
            fill.feed_lines(plan.before)
            fill.lines = meta["lines"] + shift
            fill.feed_lines(plan.after)
            fill.flush()
        except _Merged:
            return False
        fold.lines = fill.lines
        return True

    return attempt(log, whole_lines=whole_lines, overlay=apply)
