"""The store: the folded state of the log in SQLite, and every question asked of it.

`load(log)` → a `Fold` equal to `log.full_fold()` (tests hold them equal on random
logs), its tasks read from the log only when asked for. The questions are methods of
the fold (`aidp.questions.Questions`): the store's fold (`view.StoreFold`) answers each
with a query, a plain `Fold` (small logs, any doubt about the cache) with a loop over
its tasks, to the same result. Modules: `db` (the file, its schema), `fill` (lines
into rows through `aidp.fold`'s rule), `loader` (when the store may be trusted,
bringing it up to date), `view` (the loaded fold and its queries). Nothing here
prints; docs/architecture.md has the design and the measurements behind it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from aidp.log import use_reader
from aidp.model import UNKNOWN_TS
from aidp.stamp import CACHE_DIR
from aidp.store.db import NAME
from aidp.store.loader import load
from aidp.store.view import StoreFold

if TYPE_CHECKING:
    from aidp.log import Fold
    from aidp.model import Record
    from aidp.questions import Query

__all__ = [
    "CACHE_DIR", "NAME", "StoreFold", "created_at_most", "created_stamps", "find", "load",
    "narrowed", "oldest", "priority_counts", "select", "select_updated", "status_counts",
    "summaries", "tag_counts", "week_counts",
]


# The free functions below are the questions' former spelling, kept while callers
# move to the fold's methods (`fold.select(...)`: no import of the store, no sqlite3);
# each only asks the fold.

def select(fold: Fold, statuses: Collection[str]) -> list[Record]:
    return fold.select(statuses)


def select_updated(fold: Fold, statuses: Collection[str], since: int) -> list[Record]:
    return fold.select_updated(statuses, since)


def status_counts(fold: Fold) -> dict[str | None, int]:
    return fold.status_counts()


def summaries(fold: Fold, statuses: Collection[str]) -> list[tuple[str, str | None, int]]:
    return fold.summaries(statuses)


def tag_counts(fold: Fold, statuses: Collection[str] | None = None) -> dict[str, int]:
    return fold.tag_counts(statuses)


def priority_counts(fold: Fold, statuses: Collection[str]) -> dict[str | None, int]:
    return fold.priority_counts(statuses)


def oldest(fold: Fold, statuses: Collection[str]) -> str | None:
    return fold.oldest(statuses)


def week_counts(fold: Fold, kind: str, statuses: Collection[str] | None = None,
                since: int = UNKNOWN_TS) -> dict[int, int]:
    return fold.week_counts(kind, statuses, since)


def created_stamps(fold: Fold, statuses: Collection[str] | None = None) -> list[int]:
    return fold.created_stamps(statuses)


def created_at_most(fold: Fold, statuses: Collection[str], bounds: list[int]
                    ) -> tuple[int, list[int]]:
    return fold.created_at_most(statuses, bounds)


def find(fold: Fold, q: Query) -> tuple[list[Record], dict[str, int]] | None:
    return fold.find(q)


def narrowed(fold: Fold, q: Query) -> Iterable[Record]:
    return fold.narrowed(q)


class _Reader:
    load = staticmethod(load)


use_reader(_Reader(), unless_set=True)  # TaskLog.read goes through the store from now on
