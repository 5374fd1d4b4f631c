"""Writing files under `.aidp/` safely: never through a symbolic link a cloned
repository could have planted, and errors that say the tasklist was not changed."""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING

from aidp.errors import StorageError

if TYPE_CHECKING:
    from pathlib import Path


def storage_error(action: str, path: Path, exc: OSError) -> StorageError:
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENOSPC:
        reason = "no space left on device"
    return StorageError(f"Cannot {action} {path}: {reason}; the tasklist was not changed")


# git stores symbolic links, so a cloned repository decides what .aidp/ entries are: a
# tasklist linked to ~/.bashrc must never receive a line. Writes open with O_NOFOLLOW.
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
LINK_ERRNOS = (errno.ELOOP, errno.EMLINK)


def link_error(path: Path) -> StorageError:
    return StorageError(
        f"Cannot write {path}: it is a symbolic link, and aidp writes only to its own "
        "files in .aidp/; the tasklist was not changed"
    )


def refuse_link(path: Path) -> None:
    if path.is_symlink():
        raise link_error(path)
