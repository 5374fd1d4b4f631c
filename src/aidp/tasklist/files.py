"""Writing files in a project safely: never through a symbolic link a cloned repository
could have planted, never into a FIFO or a device, and errors that say the tasklist
was not changed.

git stores symbolic links, so a cloned repository decides what `.aidp/runs`,
`.aidp/.gitignore` or `.claude` are: a link to `~/.bashrc.d` must never receive a
transcript. Every path aidp writes or deletes in a project goes through `Folder`:

    with files.folder(root, ".aidp/runs", create=True) as runs:
        fd = runs.open("x.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND)

`folder(base, relative)` opens `base` (trusted: the project root the user chose, or a
`.aidp/` the caller has vetted) and then each component of `relative` with
`O_NOFOLLOW | O_DIRECTORY`, relative to the one before (a dir fd), so no linked
folder is crossed and nothing can be swapped in between. `Folder.open` opens a file
with `O_NOFOLLOW | O_NONBLOCK` (a FIFO never hangs the open) and refuses anything
but a regular file after `fstat`; `unlink`, `replace` and `scandir` work on the
folder's descriptor too. A refusal is a StorageError (exit 1) of one line.
`present_folder` is None where a folder on the way is missing (so nobody reads a
StorageError's cause to tell), and `Folder.create` makes a file only where nothing
holds its name.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from aidp.core.errors import StorageError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from types import TracebackType

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
LINK_ERRNOS = (errno.ELOOP, errno.EMLINK)
UNCHANGED = "the tasklist was not changed"


def read_regular(path: Path, limit: int | None = None, *, offset: int = 0) -> bytes | None:
    """The bytes of a regular file (its first `limit`; from `offset`), read by a path
    that may cross links (git's own metadata, another worktree's tasklist: the user's
    state, read only); None when it is missing, unreadable, a FIFO or a device. Opened
    without blocking, so a FIFO never hangs a read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        if offset:
            os.lseek(fd, offset, os.SEEK_SET)
        if limit is not None:
            return os.read(fd, limit)
        chunks = []
        while block := os.read(fd, 1 << 20):
            chunks.append(block)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def storage_error(action: str, path: Path, exc: OSError) -> StorageError:
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENOSPC:
        reason = "no space left on device"
    return StorageError(f"Cannot {action} {path}: {reason}; {UNCHANGED}")


def link_error(path: Path) -> StorageError:
    return StorageError(
        f"Cannot write {path}: it is a symbolic link, and aidp never writes through a "
        "link (a cloned repository may have planted it); nothing was written"
    )


def not_regular_error(path: Path) -> StorageError:
    return StorageError(
        f"Cannot use {path}: it is not a regular file (a FIFO, socket, device or folder), "
        "and aidp writes only regular files; nothing was written"
    )


def refuse_link(path: Path) -> None:
    if path.is_symlink():
        raise link_error(path)


class Folder:
    """A folder reached from a trusted base without crossing a link: a descriptor, and
    the path it stands for (for messages)."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd = fd
        self.path = path

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def child(self, name: str, *, create: bool = False) -> Folder:
        """The sub-folder `name` (made when `create`), never through a link."""
        found = self._child(name, create=create, missing_ok=False)
        assert found is not None
        return found

    def _child(self, name: str, *, create: bool, missing_ok: bool) -> Folder | None:
        path = self.path / name
        flags = os.O_RDONLY | _DIRECTORY | NOFOLLOW | _CLOEXEC
        for attempt in (0, 1):
            try:
                return Folder(os.open(name, flags, dir_fd=self.fd), path)
            except FileNotFoundError as exc:
                if missing_ok and not create:
                    return None
                if not create or attempt:
                    raise storage_error("write", path, exc) from exc
                try:
                    os.mkdir(name, 0o755, dir_fd=self.fd)
                except FileExistsError:
                    pass  # made meanwhile: open what is there (never a link)
                except OSError as made:
                    raise storage_error("create", path, made) from made
            except OSError as exc:
                try:
                    is_link = stat.S_ISLNK(os.lstat(name, dir_fd=self.fd).st_mode)
                except OSError:
                    is_link = False
                if is_link or exc.errno in LINK_ERRNOS:
                    raise link_error(path) from exc
                if exc.errno == errno.ENOTDIR:
                    raise StorageError(f"Cannot write under {path}: it is not a folder; "
                                       f"{UNCHANGED}") from exc
                raise storage_error("write", path, exc) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def open(self, name: str, flags: int, mode: int = 0o644) -> int:
        """A descriptor of the regular file `name` here: never a link (even a dangling
        one), never a FIFO, socket or device (refused after the open, which cannot
        hang: O_NONBLOCK)."""
        path = self.path / name
        try:
            fd = os.open(name, flags | NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, mode,
                         dir_fd=self.fd)
        except FileNotFoundError:
            raise  # the caller knows whether a missing file is fine
        except FileExistsError as exc:  # O_EXCL on a link, even a dangling one
            info = self.lstat(name)
            if info is not None and stat.S_ISLNK(info.st_mode):
                raise link_error(path) from exc
            raise
        except OSError as exc:  # ELOOP: a link; ENXIO: a FIFO nobody reads; EISDIR …
            info = self.lstat(name)
            if (info is not None and stat.S_ISLNK(info.st_mode)) or exc.errno in LINK_ERRNOS:
                raise link_error(path) from exc
            if info is not None and not stat.S_ISREG(info.st_mode):
                raise not_regular_error(path) from exc
            raise storage_error("create" if flags & os.O_EXCL else "write", path,
                                exc) from exc
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise not_regular_error(path)
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def write(self, name: str, data: bytes, *, append: bool = False,
              exclusive: bool = False, mode: int = 0o644) -> None:
        """Write `data` to `name` (created; truncated unless `append`; `exclusive`:
        only if it does not exist yet, else FileExistsError)."""
        flags = os.O_WRONLY | os.O_CREAT
        flags |= os.O_APPEND if append else (os.O_EXCL if exclusive else os.O_TRUNC)
        fd = self.open(name, flags, mode)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except OSError as exc:
            raise storage_error("write", self.path / name, exc) from exc
        finally:
            os.close(fd)

    def create(self, name: str, data: bytes, mode: int = 0o644) -> bool:
        """Write `data` to a new file `name`; False, and nothing written, when the name is
        taken by anything (a file, a link even dangling, a FIFO, a folder): what a
        repository planted there is left alone (`.gitignore` files aidp makes once)."""
        path = self.path / name
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | _CLOEXEC
        try:
            fd = os.open(name, flags, mode, dir_fd=self.fd)  # O_EXCL: never an old file
        except FileExistsError:
            return False
        except OSError as exc:
            raise storage_error("create", path, exc) from exc
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except OSError as exc:
            raise storage_error("write", path, exc) from exc
        finally:
            os.close(fd)
        return True

    def read(self, name: str, limit: int = 1 << 24) -> bytes | None:
        """The bytes of the regular file `name` here (None when it does not exist);
        a link, FIFO or device is refused like a write."""
        try:
            fd = self.open(name, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
                limit -= len(chunk)
                if limit < 0:
                    break
            return b"".join(chunks)
        finally:
            os.close(fd)

    def lstat(self, name: str) -> os.stat_result | None:
        try:
            return os.lstat(name, dir_fd=self.fd)
        except OSError:
            return None

    def require_regular(self, name: str) -> os.stat_result | None:
        """What `name` here is (None: missing); a link (even to a file), FIFO, socket,
        device or folder there is refused with the error that names it."""
        info = self.lstat(name)
        if info is not None and stat.S_ISLNK(info.st_mode):
            raise link_error(self.path / name)
        if info is not None and not stat.S_ISREG(info.st_mode):
            raise not_regular_error(self.path / name)
        return info

    def is_regular(self, name: str) -> bool:
        info = self.lstat(name)
        return info is not None and stat.S_ISREG(info.st_mode)

    def unlink(self, name: str) -> bool:
        """Remove `name` if it is a regular file here (a link, even to a file, and
        anything else stays); whether it was removed. Never raises: it cleans up."""
        if not self.is_regular(name):
            return False
        try:
            os.unlink(name, dir_fd=self.fd)
        except OSError:
            return False
        return True

    def replace(self, source: str, target: str) -> None:
        """Rename `source` over `target`, both in this folder (a link at `target` is
        replaced, never followed)."""
        os.replace(source, target, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def scandir(self) -> Iterator[os.DirEntry[str]]:
        """The entries here (their `path` is their name: use it with this folder)."""
        with os.scandir(self.fd) as entries:
            yield from entries

    def sync(self) -> None:
        """Make renames in this folder durable (best effort)."""
        try:
            os.fsync(self.fd)
        except OSError:
            pass


def folder(base: Path, relative: str | Path = "", *, create: bool = False) -> Folder:
    """The folder `base/relative`, each component of `relative` opened without following
    a link (made when `create`). `base` itself is trusted (it may be a link the user
    made). Raises StorageError (a link, a file in the way, no permission)."""
    found = _walk(base, relative, create=create, missing_ok=False)
    assert found is not None
    return found


def present_folder(base: Path, relative: str | Path = "") -> Folder | None:
    """The folder `base/relative` as `folder` opens it, or None when it (or a folder on
    the way) does not exist; a link, a file in the way, no permission: StorageError."""
    return _walk(base, relative, create=False, missing_ok=True)


def _walk(base: Path, relative: str | Path, *, create: bool, missing_ok: bool) -> Folder | None:
    try:
        fd = os.open(base, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except FileNotFoundError as exc:
        if missing_ok:
            return None
        raise storage_error("write under", base, exc) from exc
    except OSError as exc:
        raise storage_error("write under", base, exc) from exc
    current = Folder(fd, base)
    for part in Path(relative).parts:
        if part in ("", "."):
            continue
        if part == ".." or os.sep in part:
            current.close()
            raise StorageError(f"Cannot write under {base / relative}: not a plain path")
        try:
            nxt = current._child(part, create=create, missing_ok=missing_ok)
        finally:
            current.close()
        if nxt is None:
            return None
        current = nxt
    return current


def open_file(base: Path, relative: str | Path, flags: int, mode: int = 0o644, *,
              create_dirs: bool = False) -> int:
    """A descriptor of the regular file `base/relative`, opened with `flags` without
    following any link below `base` (see Folder.open); the caller closes it."""
    rel = Path(relative)
    with folder(base, rel.parent, create=create_dirs) as parent:
        return parent.open(rel.name, flags, mode)


def write_file(base: Path, relative: str | Path, data: bytes, *, append: bool = False,
               exclusive: bool = False, create_dirs: bool = False) -> None:
    """Write (or append) `data` to `base/relative`, never through a link."""
    rel = Path(relative)
    with folder(base, rel.parent, create=create_dirs) as parent:
        parent.write(rel.name, data, append=append, exclusive=exclusive)


def read_file(base: Path, relative: str | Path) -> bytes | None:
    """The bytes of `base/relative` read without following a link below `base` (None
    when it or a folder on the way does not exist)."""
    rel = Path(relative)
    parent = present_folder(base, rel.parent)
    if parent is None:
        return None
    with parent:
        return parent.read(rel.name)


# --- cache files: derived state, kept only when it is safe ---------------------------


def create_quietly(path: Path, data: bytes) -> None:
    """A new file at `path` holding `data`; nothing when anything holds the name (a link
    included) or it cannot be written."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644)
    except OSError:
        return
    try:
        os.write(fd, data)
    except OSError:
        pass
    finally:
        os.close(fd)


def is_at(path: Path, fd: int) -> bool:
    """Whether `fd` is the file at `path` (not one removed or replaced since)."""
    try:
        return os.path.samestat(os.fstat(fd), os.lstat(path))
    except FileNotFoundError:
        return False


def descriptors_of(st: os.stat_result) -> set[int]:
    """This process's descriptors of the file `st` is of (Linux, macOS: /proc or /dev/fd):
    which file a library opened by name, when a link could have been swapped in."""
    found = set()
    folder = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    for name in os.listdir(folder):
        try:
            if os.path.samestat(os.fstat(int(name)), st):
                found.add(int(name))
        except OSError:
            pass  # (the listing's own descriptor, closed by now)
    return found


def remove_irregular(paths: Iterable[Path]) -> bool:
    """Whatever is at `paths` and is not a regular file (a link, a fifo) removed;
    whether every one is now absent or regular."""
    for path in paths:
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                os.unlink(path)
        except FileNotFoundError:
            continue
        except OSError:
            return False
    return True


def remove_older(folder: Path, prefix: str, suffix: str, seconds: float) -> None:
    """The entries of `folder` named prefix…suffix and last changed `seconds` ago or
    more removed (as far as possible)."""
    import time

    try:
        for entry in list(os.scandir(folder)):
            if (entry.name.startswith(prefix) and entry.name.endswith(suffix)
                    and entry.stat(follow_symlinks=False).st_mtime < time.time() - seconds):
                os.unlink(entry.path)
    except OSError:
        pass
