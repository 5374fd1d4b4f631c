"""What `aidp run --parallel` asks of git (docs/guide.md, "Parallel agents"): the
checks before anything starts, a worktree and a branch per task, the tasklist committed
alone, a branch merged or left, a finished worktree removed.

Worktrees go under `<project>/.aidp/worktrees/<the task id's 8 hex>`, a folder that
ignores itself (its own `.gitignore` holding `*`), made without following a link a
cloned repository could have planted. The branch is `aidp/<8 hex>`: an existing one
(from an earlier, interrupted run) is checked out again with its commits, and a
worktree kept at that path is used as it is.
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from aidp.core.errors import InvalidInput
from aidp.tasklist import files, worktrees
from aidp.tasklist.git_runner import GitError, Repo, own_session, repo_of, run
from aidp.tasklist.log import TaskLog
from aidp.tasklist.paths import DATA_DIR

if TYPE_CHECKING:
    from collections.abc import Iterator

WORKTREES = "worktrees"  # under .aidp/
BRANCH_PREFIX = "aidp/"
IGNORE_ALL = b"# aidp run --parallel: the agents' worktrees, local to this clone\n*\n"


@contextmanager
def held_interrupts() -> Iterator[list[int]]:
    """Ctrl-C and SIGTERM held back while a step that must not stop half-way runs (a
    claim and its worktree, a merge, a finished worktree committed and removed), git
    started inside in a session of its own so the terminal's Ctrl-C does not reach it
    either. Yields the list of the signals that came meanwhile: the caller acts on them
    once the step is done. Off the main thread (no signal handlers there) nothing is
    held back."""
    came: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        with own_session():
            yield came
        return

    def hold(signum: int, frame: object) -> None:
        came.append(signum)

    previous = {signum: signal.signal(signum, hold)
                for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        with own_session():
            yield came
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def hex_of(tid: str) -> str:
    """The 8 hex characters that end a task id (task_<micros>_<8 hex>)."""
    return tid.rpartition("_")[2]


def branch_of(tid: str) -> str:
    return f"{BRANCH_PREFIX}{hex_of(tid)}"


class Checkout:
    """The starting worktree: the repository, the project folder in it, its branch."""

    def __init__(self, log: TaskLog, *, merge: bool) -> None:
        shared = worktrees.find(log.root)
        if shared is None:
            raise InvalidInput(f"Cannot run --parallel: {log.root} is not inside a git "
                               "repository (each agent works in a git worktree of its "
                               "own); run 'git init' first, or leave out --parallel")
        try:
            self.repo: Repo = repo_of(log)
        except GitError as exc:
            raise InvalidInput(f"Cannot run --parallel: {exc}") from None
        self.log = log
        self.subpath = shared.subpath  # the project folder below a worktree's top
        head = run(self.repo.top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}",
                    check=False)
        if head is None or head.returncode != 0:
            raise InvalidInput("Cannot run --parallel: the repository has no commit yet "
                               "(a worktree starts from one); commit first")
        branch = run(self.repo.top, "symbolic-ref", "--short", "-q", "HEAD", check=False)
        self.branch = branch.stdout.strip() if branch and branch.returncode == 0 else None
        if merge:
            self._refuse_unmergeable()

    def _refuse_unmergeable(self) -> None:
        if self.branch is None:
            raise InvalidInput("Cannot --merge: HEAD is detached (not on a branch); check "
                               "out the branch the tasks go to, or leave out --merge")
        for name, what in (("MERGE_HEAD", "merge"), ("rebase-merge", "rebase"),
                           ("rebase-apply", "rebase"), ("CHERRY_PICK_HEAD", "cherry-pick"),
                           ("REVERT_HEAD", "revert")):
            if (self.repo.git_dir / name).exists():
                raise InvalidInput(f"Cannot --merge: a {what} is in progress on "
                                   f"{self.branch}; finish or abort it first")
        others = [p for p in self.changed_paths() if p != self.repo.tasklist]
        if others:
            shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more"
                                              if len(others) > 3 else "")
            raise InvalidInput(f"Cannot --merge: {self.branch} has uncommitted changes "
                               f"({shown}); commit or stash them first (the tasklist "
                               "alone is committed for you), or leave out --merge")

    def changed_paths(self) -> list[str]:
        """Tracked paths with changes, staged or not (untracked files do not count)."""
        done = run(self.repo.top, "-c", "core.fsmonitor=false", "status", "--porcelain",
                    "-z", "--untracked-files=no")
        return _porcelain_paths(done.stdout)

    def commit_tasklist(self) -> str | None:
        """The tasklist committed alone on the starting branch, as `aidp sync` does."""
        from aidp.git.remote import commit_tasklist

        with self.log.locked():
            return commit_tasklist(self.log, self.repo)

    # --- a worktree per task -----------------------------------------------------

    def worktree_path(self, tid: str) -> Path:
        return self.log.dir / WORKTREES / hex_of(tid)

    def prepare(self, tid: str) -> Path:
        """The task's worktree (made, or the one kept by an earlier run) on its branch;
        the project folder in it. GitError when git refuses."""
        with files.folder(self.log.root, Path(DATA_DIR) / WORKTREES, create=True) as folder:
            if folder.lstat(".gitignore") is None:
                try:
                    folder.write(".gitignore", IGNORE_ALL, exclusive=True)
                except FileExistsError:
                    pass
        path = self.worktree_path(tid)
        branch = branch_of(tid)
        if _unfinished(path):
            self._clear(path)
        live = {os.path.realpath(t) for t in worktrees.worktree_tops(self._common())}
        if os.path.realpath(path) in live:
            return path / self.subpath
        if path.exists() or path.is_symlink():
            raise GitError(f"Cannot make the worktree {path}: something else is there; "
                           "move it away")
        known = run(self.repo.top, "rev-parse", "--verify", "--quiet",
                     f"refs/heads/{branch}", check=False)
        if known is not None and known.returncode == 0:
            run(self.repo.top, "worktree", "add", "--quiet", str(path), branch)
        else:
            run(self.repo.top, "worktree", "add", "--quiet", "-b", branch, str(path), "HEAD")
        return path / self.subpath

    def _clear(self, path: Path) -> None:
        """What a `git worktree add` that never finished left (killed before its
        checkout): the folder holds nothing of anyone's work, so it goes, registration
        and all, and the worktree is made again."""
        run(self.repo.top, "worktree", "remove", "--force", "--force", str(path),
            check=False)
        if path.is_dir() and not path.is_symlink():
            (path / ".git").unlink(missing_ok=True)
            path.rmdir()
        run(self.repo.top, "worktree", "prune", check=False)

    def _common(self) -> Path:
        shared = worktrees.find(self.log.root)
        assert shared is not None  # checked in __init__
        return shared.common

    def finish(self, tid: str) -> str | None:
        """An agent ended: its worktree's tasklist committed alone on its branch, then
        the worktree removed. Returns why it was kept instead (None: removed)."""
        path = self.worktree_path(tid)
        project = path / self.subpath
        log = TaskLog(project)
        try:
            if log.path.exists():
                from aidp.git.remote import commit_tasklist

                with log.locked():
                    commit_tasklist(log, repo_of(log))
            status = run(path, "-c", "core.fsmonitor=false", "status", "--porcelain", "-z",
                          "--untracked-files=all")
        except GitError as exc:
            return str(exc)
        own = (self.subpath / DATA_DIR).as_posix().removeprefix("./") + "/"
        others = [p for p in _porcelain_paths(status.stdout) if not p.startswith(own)]
        if others:
            return f"uncommitted changes ({', '.join(others[:3])})"
        done = run(self.repo.top, "worktree", "remove", "--force", str(path), check=False)
        if done is None or done.returncode != 0:
            return (done.stderr.strip().splitlines() or ["git worktree remove failed"])[-1] \
                if done is not None else "git could not be run"
        return None

    def drop_branch(self, tid: str) -> bool:
        """Delete the task's branch once it is merged into the starting branch (`git
        branch -d`: never a commit the starting branch lacks); False when git keeps it
        (checked out in a worktree that was kept, say)."""
        done = run(self.repo.top, "branch", "-d", "-q", branch_of(tid), check=False)
        return done is not None and done.returncode == 0

    def merge(self, tid: str) -> str | None:
        """Merge the task's branch into the starting branch (its tasklist committed alone
        first). None when merged; else why not (the merge is undone, the branch left)."""
        from aidp.git.remote import commit_tasklist

        branch = branch_of(tid)
        with self.log.locked():  # no aidp write lands while git rewrites the tasklist
            try:
                commit_tasklist(self.log, self.repo)
            except GitError as exc:
                return str(exc)
            try:
                done = run(self.repo.top, "merge", "--no-ff", "--no-edit", "-q", branch,
                            check=False)
            except BaseException:  # Ctrl-C mid-merge: no merge is left half done
                run(self.repo.top, "merge", "--abort", check=False)
                raise
            if done is not None and done.returncode == 0:
                return None
            conflicted = run(self.repo.top, "diff", "--name-only", "--diff-filter=U",
                              check=False)
            names = conflicted.stdout.split() if conflicted is not None else []
            run(self.repo.top, "merge", "--abort", check=False)
        if names:
            return f"conflicts in {', '.join(names[:3])}"
        lines = ((done.stderr or done.stdout) if done is not None else "").strip().splitlines()
        return lines[-1] if lines else "git merge failed"


def _unfinished(path: Path) -> bool:
    """A worktree folder an interrupted `git worktree add` left: a real folder holding
    nothing, or nothing but its `.git` file (no checkout was made in it)."""
    if path.is_symlink() or not path.is_dir():
        return False
    try:
        names = os.listdir(path)
    except OSError:
        return False
    return set(names) <= {".git"} and not (path / ".git").is_dir()


def _porcelain_paths(out: str) -> list[str]:
    """The paths of `git status --porcelain -z` (a rename's source skipped)."""
    paths: list[str] = []
    entries = out.split("\0")
    skip = False
    for entry in entries:
        if skip:
            skip = False
            continue
        if len(entry) < 4:
            continue
        paths.append(entry[3:])
        skip = entry[0] in "RC"
    return paths
