"""The run's transcript: `.aidp/runs/<session>-<UTC time>-<pid>.jsonl`, local state that
`.aidp/.gitignore` keeps out of git.

One JSON object per line — what was sent, what the agent printed (raw, as data: JSON
escapes every control character), the signals applied and how each invocation
ended. Writing it is best effort: a transcript that cannot be written is reported
once and the run goes on.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import orjson

from aidp.core.errors import AidpError
from aidp.core.model import format_ts, now_micros
from aidp.tasklist import files
from aidp.tasklist.log import TaskLog

RUNS_DIR = "runs"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(session: str, limit: int = 60) -> str:
    """A session name fit for a file name: no separators, no dot files, no `..`."""
    name = _UNSAFE.sub("_", session).strip("._-")[:limit]
    return name or "session"


class Transcript:
    def __init__(self, log: TaskLog, session: str) -> None:
        self.path: Path | None = None
        self.error: str | None = None
        self._handle = None
        try:
            log.ensure_dir()
            _ignore_runs(log.dir)
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            name = f"{safe_name(session)}-{stamp}-{os.getpid()}.jsonl"
            self.path = log.dir / RUNS_DIR / name
            # Never through a link (a committed `.aidp/runs -> ~/.bashrc.d`): aidp.tasklist.files.
            with files.folder(log.dir, RUNS_DIR, create=True) as runs:
                fd = runs.open(name, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            self._handle = os.fdopen(fd, "ab")
        except OSError as exc:
            reason = exc.strerror or exc
            self.error = f"Cannot write the transcript under {log.dir / RUNS_DIR}: {reason}"
        except AidpError as exc:  # ensure_dir's StorageError
            self.error = str(exc)

    def write(self, kind: str, **fields: Any) -> None:
        if self._handle is None:
            return
        record = {"at": format_ts(now_micros()), "kind": kind, **fields}
        try:
            self._handle.write(orjson.dumps(record) + b"\n")
            self._handle.flush()
        except OSError as exc:
            self.error = f"Cannot write the transcript {self.path}: {exc.strerror or exc}"
            self.close()

    def close(self) -> None:
        if self._handle is not None:
            try:
                self._handle.close()
            except OSError:
                pass
            self._handle = None


def _ignore_runs(data_dir: Path) -> None:
    """An older .aidp/.gitignore may not know runs/: add it, so transcripts stay local."""
    with files.folder(data_dir) as folder:  # a linked or odd .gitignore is refused
        data = folder.read(".gitignore")
        if data is None:
            return
        if any(line.strip() in (b"runs/", b"runs", b"/runs/", b"/runs")
               for line in data.splitlines()):
            return
        prefix = b"" if data.endswith(b"\n") or not data else b"\n"
        folder.write(".gitignore", prefix + f"{RUNS_DIR}/\n".encode(), append=True)
