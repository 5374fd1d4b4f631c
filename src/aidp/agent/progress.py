"""Did a turn make progress? Snapshots of the TODO list, the backlog and the work tree,
taken before and after each agent invocation.

The work tree is the git work tree, as the contract says: HEAD, `git status
--porcelain` and `git diff`, plus the content of untracked files (status only names
them). `.aidp/` is left out: aidp's own writes count as TODO list and backlog changes
instead. Outside a git work tree the tree is not watched; tool calls, the TODO list
and the backlog still are. git is run with an argument list, never through a shell.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from aidp import todos
from aidp.tasklist.log import TaskLog
from aidp.tasklist.paths import DATA_DIR

GIT_TIMEOUT = 60
HASH_LIMIT = 8 << 20  # bytes; bigger files are compared by size and mtime
_HASHES: dict[Path, tuple[tuple[int, int, int], bytes]] = {}


@dataclass
class Snapshot:
    todo: todos.TodoList
    tasks: dict[str, object]
    tree: str | None


def take(log: TaskLog, session: str, root: Path, *, ignore: tuple[str, ...] = ()) -> Snapshot:
    """`ignore`: git pathspec globs (from the project root) of files the agent CLI
    writes for itself (aider's `.aider*`), which are no progress."""
    fold = log.read()
    # The winning record's (updated_at, line) per id changes with every task write, and
    # reading it decodes no task (the index keeps it as a column).
    tasks: dict[str, object] = dict(fold.task_keys_now())
    return Snapshot(todos.current(fold, session), tasks, tree_state(root, ignore=ignore))


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """What changed between two snapshots, in words; empty when nothing did."""
    found = []
    if not todos.same(before.todo, after.todo):
        found.append("TODO list")
    if before.tasks != after.tasks:
        found.append("backlog")
    if before.tree != after.tree:
        found.append("work tree")
    return found


# --- the work tree ------------------------------------------------------------------


def tree_state(root: Path, *, ignore: tuple[str, ...] = ()) -> str | None:
    """A fingerprint of the git work tree below `root`; None outside one (or without git)."""
    git = shutil.which("git")
    if git is None:
        return None
    inside = _git(git, root, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.strip() != b"true":
        return None
    return _git_state(git, root, ignore)


def _git(git: str, root: Path, *args: str) -> bytes | None:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}  # never take index.lock from the agent
    try:
        result = subprocess.run(
            [git, "-C", str(root), *args],
            capture_output=True,
            env=env,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout if result.returncode == 0 else None


def _git_state(git: str, root: Path, ignore: tuple[str, ...] = ()) -> str | None:
    here = ["--", ".", f":(exclude){DATA_DIR}", *(f":(exclude,glob,top){p}" for p in ignore)]
    status = _git(git, root, "status", "--porcelain=v1", "-z", "--untracked-files=all", *here)
    if status is None:
        return None
    digest = hashlib.sha256()
    digest.update(_git(git, root, "rev-parse", "--verify", "-q", "HEAD") or b"no HEAD")
    digest.update(b"\0status\0" + status)
    diff = _git(git, root, "diff", "--no-ext-diff", "--no-textconv", "--binary", *here)
    digest.update(b"\0diff\0" + (diff or b""))
    prefix = _git(git, root, "rev-parse", "--show-prefix") or b""
    top = root
    depth = prefix.strip().count(b"/")
    for _ in range(depth):
        top = top.parent
    # Untracked files: status only names them, so their size and mtime say if they changed.
    for entry in status.split(b"\0"):
        if entry.startswith(b"?? "):
            path = top / os.fsdecode(entry[3:])
            digest.update(b"\0" + entry + _content_key(path))
    return digest.hexdigest()


def _content_key(path: Path) -> bytes:
    """What a file holds: a hash of its content (so rewriting the same bytes is no
    change), or size and mtime for a very big file. Hashes are kept while the file's
    size and mtime stay the same, so an unchanged tree is not read twice."""
    try:
        st = path.stat()
    except OSError:
        return b"gone"
    key = (st.st_size, st.st_mtime_ns, st.st_ino)
    if st.st_size > HASH_LIMIT or not stat.S_ISREG(st.st_mode):
        return f"{st.st_size}:{st.st_mtime_ns}".encode()
    cached = _HASHES.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        with open(path, "rb") as handle:
            value = hashlib.file_digest(handle, "sha256").digest()
    except OSError:
        return f"{st.st_size}:{st.st_mtime_ns}".encode()
    _HASHES[path] = (key, value)
    return value
