"""A person at a terminal, for the commands that ask one (`aidp trust`): stdin is a real
pseudo-terminal, and the answer is typed on it before the command reads it. stdout and
stderr stay pipes (or captures), so what the command prints is checked as usual."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@contextmanager
def terminal_stdin(answer: str = "y") -> Iterator[io.TextIOWrapper]:
    """A text stream on the terminal side of a new pseudo-terminal, `answer` and Enter
    already typed on it."""
    master, slave = pty.openpty()
    try:
        os.write(master, (answer + "\n").encode())
        with io.TextIOWrapper(io.FileIO(slave, "r", closefd=False), encoding="utf-8") as tty:
            yield tty
    finally:
        os.close(slave)
        os.close(master)


@dataclass
class Typed:
    code: int
    out: str
    err: str

    def __repr__(self) -> str:  # shown by pytest when an assert fails
        return f"Typed(code={self.code}, out={self.out!r}, err={self.err!r})"


def run_on_terminal(args: list[str], *, cwd: Path | None = None,
                    env: dict[str, str] | None = None, answer: str = "y",
                    program: list[str] | None = None, timeout: float = 120) -> Typed:
    """`python -m aidp ARGS` (or `program ARGS`) as a separate process whose stdin is a
    pseudo-terminal a person typed `answer` on."""
    master, slave = pty.openpty()
    try:
        os.write(master, (answer + "\n").encode())
        proc = subprocess.run([*(program or [sys.executable, "-m", "aidp"]), *args],
                              cwd=cwd, env=env, stdin=slave, capture_output=True,
                              text=True, timeout=timeout)
    finally:
        os.close(slave)
        os.close(master)
    return Typed(proc.returncode, proc.stdout, proc.stderr)
