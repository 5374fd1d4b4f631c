"""What `aidp run --parallel` writes home, into the starting worktree's tasklist, when
an agent ends: every record the agent's worktree wrote (docs/guide.md, "aidp run
--backlog --parallel N"), so that the next agents see what it filed and changed once
its worktree is gone, and nothing is filed twice in one run."""

from __future__ import annotations

import zlib
from collections.abc import Callable

from aidp.core.errors import AidpError
from aidp.tasklist.line import parse_line
from aidp.tasklist.log import TaskLog


def mark(log: TaskLog) -> tuple[int, int]:
    """(length, crc32) of a worktree's tasklist as its agent starts ((0, 0) for none):
    what the worktree adds after it is the agent's."""
    try:
        data = log.read_bytes() if log.path.exists() else b""
    except (AidpError, OSError):
        return (0, 0)
    return (len(data), zlib.crc32(data))


def copy_home(home: TaskLog, theirs: TaskLog, start: tuple[int, int],
              warn: Callable[[str], None]) -> None:
    """Every record the worktree's tasklist `theirs` gained since `start` (its task's,
    the tasks the agent filed or changed, its TODO list's) appended to `home` as they
    are; a line `home` has already is not copied again (the fold would read it once
    anyway). A tasklist rewritten meanwhile (repair, compact) has each of its lines
    counted."""
    if not theirs.path.exists():
        return
    try:
        have = set(home.read_bytes().split(b"\n")) if home.path.exists() else set()
        data = theirs.read_bytes()
    except (AidpError, OSError) as exc:
        warn(f"Cannot read {theirs.path}: {exc}")
        return
    size, crc = start
    if size and len(data) >= size and zlib.crc32(data[:size]) == crc:
        data = data[size:]
    records = []
    for raw in data.split(b"\n"):
        if not raw.strip() or raw in have:
            continue
        record = parse_line(raw)
        if record is not None:
            records.append(record)
            have.add(raw)
    if records:
        home.append(records)
