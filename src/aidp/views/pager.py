"""A pager for human output longer than the screen, on a terminal only (like git).

The pager is AIDP_PAGER, else PAGER, else `less` (with LESS=FRX unless LESS is set: it
quits when the text fits, keeps colours and leaves the text on the screen). An empty
value or `cat` means none. It is split like a shell would and never run through one.
Never when stdout is not a terminal (a pipe, a file, a test), never with `--no-pager`,
never for JSON. A pager that cannot be started is skipped: the text is printed.

Imported only when stdout is a terminal and the text is long (aidp.views.render.write_text).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Mapping

_SGR = re.compile(r"\x1b\[[0-9;]*m")


def screen_lines(text: str, columns: int) -> int:
    """How many terminal rows `text` takes at `columns` (colours take none)."""
    width = max(1, columns)
    rows = 0
    for line in _SGR.sub("", text).splitlines():
        rows += max(1, -(-len(line) // width))
    return rows


def command(text: str, *, tty: bool, columns: int, rows: int, env: Mapping[str, str],
            disabled: bool = False) -> list[str] | None:
    """The pager to show `text` with, or None to print it: the decision alone, from
    what it depends on (tested with made-up terminal sizes)."""
    if disabled or not tty or rows <= 0 or screen_lines(text, columns) < rows:
        return None
    return chosen(env)


def chosen(env: Mapping[str, str]) -> list[str] | None:
    """The pager the environment names (AIDP_PAGER, else PAGER, else less); None for
    none (empty, `cat`, or not a command line)."""
    named = env.get("AIDP_PAGER")
    if named is None:
        named = env.get("PAGER", "less")
    try:
        argv = shlex.split(named)
    except ValueError:
        return None  # an unbalanced quote: not a command we can run
    if not argv or argv == ["cat"]:
        return None
    return argv


def available() -> bool:
    """Whether long output on this terminal would go through a pager that exists."""
    import shutil

    argv = chosen(os.environ)
    return argv is not None and shutil.which(argv[0]) is not None


def page(text: str) -> bool:
    """Show `text` (a command's whole human output) through the pager when it is longer
    than the terminal; False when it should be printed instead."""
    import shutil

    stdout = sys.stdout
    try:
        tty = stdout.isatty()
    except (AttributeError, ValueError):
        return False
    size = shutil.get_terminal_size((80, 0))
    argv = command(text, tty=tty, columns=size.columns, rows=size.lines, env=os.environ)
    if argv is None:
        return False
    import signal
    import subprocess

    from aidp.core.terminal import terminal_text

    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    data = terminal_text(text).encode(stdout.encoding or "utf-8", stdout.errors or "strict")
    stdout.flush()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, env=env)
    except OSError:
        return False  # no such program: print the text instead
    # The pager reads the keyboard; Ctrl-C there is for it (less: stop a search).
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert proc.stdin is not None
        try:
            proc.stdin.write(data)
            proc.stdin.close()
        except BrokenPipeError:  # the reader quit before the end (q in less)
            pass
        proc.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    return True
