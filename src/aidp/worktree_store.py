"""Every worktree's tasklist through this worktree's store (the rule and the plan:
aidp.worktrees): the others' lines folded on top by the fill, in a transaction the fold
keeps open and never commits (it holds the store's write lock until the fold is dropped).
A client of the store's public seam (`loader.attempt`'s overlay, `fill.Filler.add`):
the store knows nothing of worktrees. Importing this module makes `TaskLog.read` go
through the store, for one worktree and for several (`Reader`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from aidp import worktrees
from aidp.fold import read_line
from aidp.log import use_reader
from aidp.store import db, load
from aidp.store.fill import MEMORY, SPAN_MASK, Filler
from aidp.store.loader import attempt

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

    from aidp.fold import Fold
    from aidp.log import TaskLog
    from aidp.store.view import StoreFold

def load_shared(log: TaskLog, tasklists: list[tuple[Path, bool]], *,
                whole_lines: bool = False) -> Fold | None:
    """The fold of every worktree's tasklist (worktrees.fold), or None: fold plainly."""
    try:
        plan = worktrees.plan(tasklists, log.path, db.folder(log.dir, create=False),
                              whole_lines=whole_lines)
    except OSError:
        return None

    def apply(conn: sqlite3.Connection, meta: dict[str, Any], fold: StoreFold, fd: int
              ) -> bool:
        if plan is None or meta["offset"] != plan.end:
            return False  # (the file grew since the plan)
        common, shift = meta["lines"] - plan.own_lines, len(plan.before)
        conn.execute("BEGIN")
        for table in ("task", "typed", "tag") if shift else ():  # this file's lines move
            conn.execute(f"UPDATE {table} SET seq = -seq - ? WHERE seq > ?", (shift, common))
            conn.execute(f"UPDATE {table} SET seq = -seq WHERE seq < 0")  # down past them
            if table != "tag":
                conn.executemany(f"UPDATE {table} SET line = line + ? WHERE id = ? AND line "
                                 "> ?", [(shift, rid, common) for rid in plan.own_ids])
        pending = orjson.loads(meta.get("pending") or "[]")
        fill = Filler(conn, common, 0, empty=False, fielded=bool(meta.get("fielded")),
                      pending={(t, u): r for t, u, r in pending})
        fill.fd, fill.end = fd, plan.end  # the store's winners are read from this log
        fill.add(plan.before)
        fill.lines = meta["lines"] + shift
        fill.add(plan.after)
        if fill.merged:
            return False  # a task changed in two worktrees: its lines are in several files
        fill.write()
        won = [(rid, fill.line(v & SPAN_MASK)) for rid, v in fill.task_keys.items()
               if v is not None and (v & SPAN_MASK) >> 40 >= MEMORY]
        conn.executemany("UPDATE task SET off = -1, len = 0 WHERE id = ?",
                         [(rid,) for rid, _raw in won])  # read from `merged`, not the log
        conn.executemany("INSERT OR REPLACE INTO merged VALUES (?, ?)",
                         [(rid, orjson.dumps(read_line(raw)[2]).decode()) for rid, raw in won])
        fold.lines = fill.lines
        return True

    return None if plan is None else attempt(log, whole_lines=whole_lines, overlay=apply)


class Reader:
    """`TaskLog.read` through the store (log.Reader)."""

    load = staticmethod(load)
    load_shared = staticmethod(load_shared)


use_reader(Reader(), unless_set=True)  # TaskLog.read goes through the store from now on
