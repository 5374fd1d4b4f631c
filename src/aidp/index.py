"""Loading the folded state of a log.

For now a full fold of the file; the incremental snapshot plugs in here and must give
exactly the same answers (tests/test_index.py compares the two).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aidp.log import Fold, TaskLog


def load(log: TaskLog) -> Fold:
    return log.full_fold()
