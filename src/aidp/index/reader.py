"""The log file as the index reads it: pread on an open descriptor, never a mapping.

A memory map of a file that another program truncates or rewrites in place (`cp
backup tasklist.jsonl`, `> file`, `rsync --inplace`, editors) kills the reading
process with SIGBUS. pread instead returns fewer bytes, which is reported as
`Changed`, and the caller folds again or says so.
"""

from __future__ import annotations

import os
import zlib

from aidp.index import columns
from aidp.index.columns import Changed

_BACK = 64 * 1024  # the last newline is searched for this much at a time


class LogFile:
    """An open log of a known size; the descriptor stays open while tasks are decoded
    from it, so a log replaced by rename (git checkout, compact) is still read whole."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size

    def read(self, start: int, end: int) -> bytes:
        """Bytes start:end, all of them, or Changed."""
        data = os.pread(self.fd, end - start, start)
        while len(data) < end - start:
            more = os.pread(self.fd, end - start - len(data), start + len(data))
            if not more:
                raise Changed("the tasklist shrank while it was read")
            data += more
        return data

    def last_newline_end(self, end: int | None = None) -> int:
        """Where the last whole line before `end` (default: the size) ends; 0 if none."""
        at = self.size if end is None else end
        while at > 0:
            start = max(0, at - _BACK)
            found = self.read(start, at).rfind(b"\n")
            if found >= 0:
                return start + found + 1
            at = start
        return 0

    def crc(self, end: int) -> int:
        """crc32 of the first `end` bytes, read in chunks (memory stays flat)."""
        crc = 0
        at = 0
        while at < end:
            block = self.read(at, min(end, at + columns.CHUNK))
            crc = zlib.crc32(block, crc)
            at += len(block)
        return crc
