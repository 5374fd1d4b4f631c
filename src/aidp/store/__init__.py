"""The store: the log's folded state in SQLite; `load(log)` equals `log.full_fold()`.
Modules: `db` (the file, its schema), `fill` (lines into rows by `aidp.tasklist.fold`'s rule),
`loader` (when the store may be trusted, keeping it up to date). The fold a load
returns asks every question of it as a query: `aidp.store.questions.StoreFold`, beside
the reference answers it must equal. Nothing here prints, nor knows of worktrees:
`aidp.store.overlay` folds their lines on top and registers the reader `TaskLog.read`
goes through. docs/architecture.md: the design, its measurements."""

from __future__ import annotations

from aidp.store.db import NAME
from aidp.store.loader import load
from aidp.store.questions import StoreFold
from aidp.tasklist.stamp import CACHE_DIR

__all__ = ["CACHE_DIR", "NAME", "StoreFold", "load"]
