"""Files a person names on the command line (`report --html FILE`, `tasks export -o
FILE`): written whole or not at all, and any failure one line (docs/reliability.md §8)."""

from __future__ import annotations

import contextlib
import os
import stat

from aidp.core.errors import InvalidInput, StorageError
from aidp.core.terminal import inert


def write_named(name: str, data: bytes, *, option: str) -> None:
    """Write `data` to the file `name`, as a shell's `>` would, except that a failure
    (a read-only folder, a full disk, a missing folder) ends in StorageError, `Cannot
    write NAME: reason` (exit 1), with a file named directly left as it was.

    A regular file named directly, or none yet, is replaced whole: the data goes into a
    new file beside it, which then takes its name (the old file's mode kept). Anything
    else — a link (followed, as `>` does), a fifo, /dev/stdout, a terminal — is written
    to as it is. A folder is bad input (exit 2), naming `option`. Refused to a process
    under an agent, which aidp lets write no file of its naming (`-o ~/.bashrc`)."""
    from aidp.trust.person import refuse_for_agent

    refuse_for_agent(f"writing the file {option} names ({inert(name)!r})",
                     "Run it yourself, in a terminal")
    try:
        here: os.stat_result | None = os.lstat(name)
    except OSError:
        here = None  # none yet (or unreachable: the write below says why)
    try:
        st = os.stat(name) if here is not None and stat.S_ISLNK(here.st_mode) else here
    except OSError:
        st = None  # a dangling link: `>` creates its target
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise InvalidInput(f"Invalid {option} {inert(name)!r}: it is a folder; "
                           "name a file to write")
    try:
        if here is None or stat.S_ISREG(here.st_mode):
            _replace(name, data, None if here is None else stat.S_IMODE(here.st_mode))
        else:
            _write_through(name, data)
    except OSError as exc:
        raise StorageError(f"Cannot write {inert(name)}: {exc.strerror or exc}") from None


def _write_through(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _replace(path: str, data: bytes, mode: int | None) -> None:
    folder, base = os.path.split(path)
    temp = os.path.join(folder, f".{base}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temp)  # a crashed run's, of a process with this pid: never this one's
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            _write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
