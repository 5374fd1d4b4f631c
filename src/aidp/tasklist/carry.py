"""A fold carried on: a command that read every worktree's tasklist and reads again (a
write, under the repository's lock) adds the lines the files grew by to the fold it has
(`extend`), when that answers as the rule (aidp.tasklist.worktrees.fold), instead of
folding every file again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aidp.tasklist.files import read_regular
from aidp.tasklist.fold import Fold
from aidp.tasklist.worktrees import ENDING, StatKeys, lines_of


def carried(memo: tuple[Any, Fold], key: Any, tasklists: list[tuple[Path, bool]]
            ) -> Fold | None:
    """The fold `memo` (a TaskLog's: (the stat keys of every tasklist, the tasklists,
    whole_lines), the fold) carried on to `key` (the same for the files now), or None."""
    if memo[0] is None or key is None or memo[0][1:] != key[1:]:
        return None  # other worktrees, or lines taken otherwise
    return extend(memo[1], tasklists, memo[0][0], key[0])


def extend(old: Fold, tasklists: list[tuple[Path, bool]], was: StatKeys, now: StatKeys
           ) -> Fold | None:
    """The fold of every worktree's tasklist now, from `old` (their `fold` when every one
    ended in a newline) without folding again what it holds, or None: fold them again.
    What a command that reads and then writes does under the repository's lock (the
    files changed since its read: in a fleet, nearly always), in half a millisecond where
    folding every file again takes ~5 ms per thousand lines: so the lock's holder is
    done before another process takes its core.

    Only when the answer is the rule's (`fold`): the same tasklists, each the same file
    (by the `stat_keys` of them all when `old` was made, `was`, and `now`: the same
    device and inode, or missing in both) that has only grown, where `old`'s lines
    ended (not at its start) still holding the bytes they ended with, by whole lines,
    each a record (no damage) whose updated_at is later than its id's winner's (so its
    place among the files' lines decides nothing: a line already folded, or brought by
    two files, is never taken twice), about no task a file after it in the order has
    lines of its own about, nor one whose task_fields record `old` holds waiting (the
    rule takes those after it: an older record, or that companion, then may make a
    task's merge field by field), that conflicts with no change it had not seen and is about
    no task merged field by field (`Fold.conflicted`: such a task is folded again from
    all its lines). The fold numbers these lines after `old`'s (the rule numbers them
    where their file's lines are): only the order of equal stamps hangs on a line's
    number, and there are none. A task or record first named here comes after the ones
    `old` holds."""
    from aidp.core.model import UNKNOWN_TS, parse_ts_once
    from aidp.tasklist.fold import FIELDS, TASK, TYPED, read_lines

    sources = old.sources
    if sources is None or len(sources) != len(tasklists) or any(
            path != source[0] for (path, _own), source in zip(tasklists, sources, strict=True)):
        return None
    tails: list[bytes] = []
    ends: list[tuple[Path, int, bytes]] = []
    for (path, length, ending), before, after in zip(sources, was, now, strict=True):
        if (before is None) != (after is None) or (
                before is not None and after is not None and before[:2] != after[:2]):
            return None  # another file (a checkout, a compaction), or one gone or new
        tail = b""
        if after is not None:
            data = read_regular(path, offset=length - len(ending))
            if data is None or not data.startswith(ending):
                return None  # rewritten where `old` read it
            tail = data[len(ending):]
            if tail and (not tail.endswith(b"\n") or not length):
                return None  # a line being written; a file's first lines (where the
        elif length:  # lines every file starts with end may move: `common_start`)
            return None
        tails.append(tail)
        ends.append((path, length + len(tail), (ending + tail)[-ENDING:]))
    lines = [(number, raw) for number, tail in enumerate(tails) for raw in lines_of(tail)]
    if not lines:
        return old
    new, merged, last = old.copy(), old.conflicted, old.last_file
    for (number, _raw), (kind, rid, record) in zip(
            lines, read_lines([raw for _number, raw in lines]), strict=True):
        new.lines += 1
        if record is None:
            return None  # damage, a blank line: counted in one file only
        stamp = parse_ts_once(record.get("updated_at"))
        if kind == TYPED and record["type"] == FIELDS:  # held for its task's record
            task, previous = record.get("task"), None
            if type(task) is not str or task in merged or stamp == UNKNOWN_TS or (
                    (previous := new.task_keys.get(task)) is not None
                    and stamp <= previous[0]):
                return None  # (one its task's record already brought: folded before)
            new.add_record(record, new.lines)
            continue
        previous = (new.task_keys if kind == TASK else new.typed_keys).get(rid)
        if stamp == UNKNOWN_TS or (previous is not None and stamp <= previous[0]) or (
                kind == TASK and (rid in merged or last.get(rid, number) > number
                                  or (rid, record.get("updated_at")) in old.pending)):
            return None  # (a companion `old` holds: from a file after it, maybe)
        new.add_record(record, new.lines)
        if kind == TASK:
            new.last_file[rid] = number
        if len(new.conflicted) != len(merged):
            return None
    new.sources = tuple(ends)
    return new
