"""The store's detached builder: `start` runs `python -m aidp.store.build ROOT FD WHY`,
which builds the missing store of ROOT's tasklist while the command that found it
missing answers with a plain fold (docs/store.md, "When the store is built").
The builder inherits the build's turn (descriptor FD: aidp.tasklist.lock.turn), so no other
process starts a build meanwhile, and ends it by exiting. It writes only the store's
cache, never the tasklist; any error ends it quietly (nothing to show it to): the
next read that finds the store missing starts another.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aidp.tasklist.log import TaskLog

NICE = 10  # below the commands that follow it: on two cores it must not slow the next one
_STARTED: list[Any] = []  # this process's builders (subprocess.Popen), kept till reaped


def start(log: TaskLog, held: int, why: str) -> None:
    """A detached builder of `log`'s store, given the turn `held` (a descriptor it
    inherits: the turn ends when it exits). Started, not forked (aidp mcp and aidp run
    have threads, whose locks a fork would copy), in a session of its own and with no
    descriptor of the caller's but the turn: a caller capturing aidp's output
    (subprocess.run(capture_output=True)) never waits for it."""
    import subprocess

    _STARTED[:] = [p for p in _STARTED if p.poll() is None]  # (finished ones reaped)
    builder = subprocess.Popen(
        [sys.executable, "-m", "aidp.store.build", str(log.root), str(held), why],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        close_fds=True, pass_fds=(held,), start_new_session=True)
    _STARTED.append(builder)
    # Below the caller from its start (main's own nice comes after the interpreter and
    # the store's imports: ~0.1 s of CPU taken from the read that started it).
    lower(builder.pid)


def lower(pid: int) -> None:
    """Process `pid` (0: this one) at NICE at least (never raised: a builder of a
    command run under `nice` stays as low as it)."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, max(os.getpriority(os.PRIO_PROCESS, pid), NICE))
    except OSError:
        pass  # (gone already, or not allowed here: it builds at the caller's priority)


def main(argv: list[str]) -> int:
    """Build the store (ROOT FD WHY, as `start` gives them); 0 when the build ran."""
    lower(0)  # (its starter lowered it already, unless that was not allowed)
    try:
        from aidp.store.loader import attempt
        from aidp.tasklist.log import TaskLog

        # a read, as the one that started it would have made with the turn: it builds
        attempt(TaskLog(Path(argv[0]), create_root=False), whole_lines=True,
                held=(int(argv[1]), argv[2]))
    except Exception:  # nobody to tell: the next read that finds no store tries again
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
