"""Task ids as people write and read them: which task a reference names (the full id,
or a leading part of its hex part) and the shortest part that names it alone.

The lowest of the backlog's modules: `tasks` and `queue` both resolve ids through it.
Each function takes the fold and asks it (`aidp.tasklist.questions.Questions.ids_with_prefix`):
the store's fold searches its id index, a plain fold loops over its ids."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from aidp.core.errors import AmbiguousId, TaskNotFound

if TYPE_CHECKING:
    from aidp.tasklist.questions import Questions

MIN_ID_PREFIX = 4
# A prefix of a full id names a task only once it reaches MIN_ID_PREFIX characters of
# the hex part, like a bare hex prefix does.
_ENOUGH_OF_AN_ID = re.compile(rf"task_[^_]+_[^_]{{{MIN_ID_PREFIX}}}")
ID_RULE = (f"an id is the full id, or at least {MIN_ID_PREFIX} leading characters of the "
           "hex part after its last '_': ca35, task_1795314333_ca35")


def resolve_id(fold: Questions, ref: str) -> str:
    """The id `ref` names in `fold`: a full id, or ≥4 leading characters of its hex part."""
    ref = ref.strip()
    if ref in fold.tasks:
        return ref
    needle = ref.lower()
    matches: list[str]
    if needle.startswith("task_") and not _ENOUGH_OF_AN_ID.match(needle):
        matches = []  # task_1 is not 4 characters of a hex part: it names nothing
    elif needle.startswith("task_"):
        matches = fold.ids_with_prefix(needle, last_part=False)
    elif len(needle) >= MIN_ID_PREFIX:
        matches = fold.ids_with_prefix(needle, last_part=True)
    else:
        matches = []
    if not matches:
        enough = (_ENOUGH_OF_AN_ID.match(needle) if needle.startswith("task_")
                  else len(needle) >= MIN_ID_PREFIX)
        raise TaskNotFound(ref, "" if enough else ID_RULE)
    if len(matches) > 1:
        raise AmbiguousId(ref, sorted(matches))
    return matches[0]


def resolve_all(fold: Questions, refs: Iterable[str]) -> list[str]:
    """The ids `refs` name (resolve_id), each once, in the order first named."""
    return list(dict.fromkeys(resolve_id(fold, ref) for ref in refs))


def short_ids(fold: Questions, ids: Sequence[str]) -> dict[str, str]:
    """For each of `ids`, the shortest leading part of its hex part (at least
    MIN_ID_PREFIX characters) that `resolve_id` reads as that task and no other among
    the fold's tasks: what human output shows. An id without such a part (another
    writer's shape) stays whole; an id not in the fold (a task about to be written) is
    told apart from the fold's."""
    wanted = {tid: tid.rpartition("_")[2] for tid in dict.fromkeys(ids)}
    shown = {tid: tid for tid, hex_part in wanted.items()
             if not tid.startswith("task_") or len(hex_part) < MIN_ID_PREFIX or "_" in hex_part}
    todo = {tid: hex_part.lower() for tid, hex_part in wanted.items() if tid not in shown}
    # How many characters an id shares at most with another tells how many it needs:
    # the fold answers for all of them at once (the store: its neighbours in sorted
    # order, found in its index; a plain fold: one pass over its ids).
    shared = fold.shared_prefixes(todo, MIN_ID_PREFIX) if todo else {}
    for tid, mine in todo.items():
        length = max(MIN_ID_PREFIX, shared[tid] + 1)
        shown[tid] = wanted[tid][:length] if length <= len(mine) else tid
    return shown


def ids_then_reason(words: Sequence[str]) -> tuple[list[str], str | None]:
    """`abandon ID REASON…` (no --reason): the first word is the id and the rest, if
    any, the reason. A reason word is never read as an id, whatever it looks like:
    `abandon 88b8 dead end` abandons 88b8 alone, never a task whose id starts `dead`
    (docs/guide.md). With --reason every word is an id."""
    return list(words[:1]), " ".join(words[1:]) or None
