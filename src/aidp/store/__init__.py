"""The store: the log's folded state in SQLite; `load(log)` equals `log.full_fold()`.

    db.py         the file: safe opening, the schema and its indexes, the meta row
    fill.py       lines into rows, by aidp.tasklist.fold's rule (`Filler`)
    loader.py     when the store may be trusted, the refresh of the appended tail, when
                  and by whom a missing store is built
    build.py      the detached builder (`python -m aidp.store.build`)
    questions.py  `StoreFold`, the fold a load returns: every question as a query, equal
                  to the reference answers of aidp.tasklist.questions
    overlay.py    the other worktrees' lines folded on top, never committed; the reader
                  `TaskLog.read` goes through

Nothing here prints. The design, its guarantees and its measurements: docs/store.md.
"""

from __future__ import annotations

from aidp.store.db import NAME
from aidp.store.loader import load
from aidp.store.questions import StoreFold
from aidp.tasklist.stamp import CACHE_DIR

__all__ = ["CACHE_DIR", "NAME", "StoreFold", "load"]
