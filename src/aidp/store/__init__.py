"""The store: the folded state of the log in SQLite, and every question asked of it.

`load(log)` → a `Fold` equal to `log.full_fold()` (tests hold them equal on random
logs), its tasks read from the log only when asked for. The questions are methods of
the fold (`aidp.questions.Questions`): the store's fold (`view.StoreFold`) answers each
with a query, a plain `Fold` (small logs, any doubt about the cache) with a loop over
its tasks, to the same result. Modules: `db` (the file, its schema), `fill` (lines
into rows through `aidp.fold`'s rule), `loader` (when the store may be trusted,
bringing it up to date), `view` (the loaded fold and its queries). Nothing here
prints, nor knows of worktrees: `aidp.worktree_store` folds the other worktrees' lines
on top, and registers the reader `TaskLog.read` goes through. docs/architecture.md has
the design and the measurements behind it.
"""

from __future__ import annotations

from aidp.stamp import CACHE_DIR
from aidp.store.db import NAME
from aidp.store.loader import load
from aidp.store.view import StoreFold

__all__ = ["CACHE_DIR", "NAME", "StoreFold", "load"]
