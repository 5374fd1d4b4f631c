"""Running git: one subprocess call with its errors, the repository of a tasklist,
files at a revision."""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, overload

from aidp.core.errors import AidpError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from subprocess import CompletedProcess



class GitError(AidpError):
    """git refused, or the repository is in a state aidp will not act in."""


# --- running git -------------------------------------------------------------------------

_OWN_SESSION: ContextVar[bool] = ContextVar("aidp_git_own_session", default=False)


@contextmanager
def own_session() -> Iterator[None]:
    """git started inside runs in a session of its own, out of the terminal's reach: a
    Ctrl-C meant for the caller cannot stop a merge or a `worktree add` half-way. The
    caller holds its own interrupt back until git is done (`run --parallel`)."""
    token = _OWN_SESSION.set(True)
    try:
        yield
    finally:
        _OWN_SESSION.reset(token)


@overload
def run(root: Path, *args: str, check: Literal[True] = ..., env: dict[str, str] | None = ...,
         stdin: str | None = ...) -> CompletedProcess[str]: ...
@overload
def run(root: Path, *args: str, check: bool, env: dict[str, str] | None = ...,
         stdin: str | None = ...) -> CompletedProcess[str] | None: ...
def run(root: Path, *args: str, check: bool = True, env: dict[str, str] | None = None,
         stdin: str | None = None) -> CompletedProcess[str] | None:
    """`git ARGS` in `root`: the completed process; None when git cannot be started."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=False,
            env={**os.environ, **(env or {})}, input=stdin, timeout=300,
            start_new_session=_OWN_SESSION.get(),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        if check:
            raise GitError(f"Cannot run git: {exc}") from exc
        return None
    if check and done.returncode != 0:
        message = (done.stderr or done.stdout).strip().splitlines()
        shown = message[-1] if message else f"exit code {done.returncode}"
        raise GitError(f"git {args[0]} failed: {shown}")
    return done


def ignores(root: Path, path: Path) -> bool:
    """Whether git ignores `path` (a tracked file is never ignored). No git, or no
    repository: False (so, for aidp.trust.gate, a config file then needs trust)."""
    import subprocess

    try:
        result = subprocess.run(
            # fsmonitor is a command line in .git/config: never let a copied .git run one.
            ["git", "-c", "core.fsmonitor=false", "check-ignore", "-q", "--", str(path)],
            cwd=root, capture_output=True, check=False, timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0


def tracked(root: Path, path: Path) -> bool:
    """Whether git tracks `path` itself (a committed link, say). No git, or no
    repository: False."""
    done = _run_bytes(root, "-c", "core.fsmonitor=false", "ls-files", "-z", "--",
                      str(path))
    if not done:
        return False
    wanted = os.fsencode(os.path.relpath(path, root)).replace(b"\\", b"/")
    return done.rstrip(b"\0").split(b"\0")[0] == wanted


def _run_bytes(root: Path, *args: str) -> bytes | None:
    """stdout of `git ARGS` as bytes; None when it fails."""
    import subprocess

    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, check=False,
                              timeout=300)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


class Repo:
    """The git repository holding a project: its top, git dir, and the tasklist's path in it."""

    def __init__(self, top: Path, git_dir: Path, tasklist: str) -> None:
        self.top = top
        self.git_dir = git_dir
        self.tasklist = tasklist  # relative to `top`, with forward slashes


class Tasklist(Protocol):
    """What `repo_of` asks of a tasklist (`aidp.tasklist.log.TaskLog` is one)."""

    @property
    def root(self) -> Path: ...  # the project root, where git is asked

    @property
    def path(self) -> Path: ...  # the tasklist file


def repo_of(log: Tasklist) -> Repo:
    """The repository the project's tasklist is in; a GitError when there is none."""
    done = run(log.root, "rev-parse", "--show-toplevel", "--absolute-git-dir", check=False)
    if done is None:
        raise GitError("Cannot run git: is it installed? Nothing was changed")
    if done.returncode != 0:
        raise GitError(f"Not in a git repository: {log.root} (this command works on the "
                       "tasklist's git history); nothing was changed")
    top_text, git_text = done.stdout.splitlines()[:2]
    top = Path(top_text)
    try:
        rel = log.path.resolve().relative_to(top.resolve())
    except ValueError as exc:
        raise GitError(f"The tasklist {log.path} is outside the git work tree {top}; "
                       "nothing was changed") from exc
    return Repo(top, Path(git_text), rel.as_posix())


def file_at(repo: Repo, rev: str) -> bytes:
    """The tasklist as revision `rev` has it (empty when it has none)."""
    return _run_bytes(repo.top, "show", f"{rev}:{repo.tasklist}") or b""


def verify_rev(repo: Repo, rev: str) -> str:
    """The commit `rev` names; InvalidInput when it names none."""
    from aidp.core.errors import InvalidInput

    if rev.startswith("-"):
        raise InvalidInput(f"Invalid revision {rev!r}: give a commit, branch or tag "
                           "(REV or REV..REV)")
    done = run(repo.top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    if done is None or done.returncode != 0:
        raise InvalidInput(f"Unknown revision {rev!r}: give a commit, branch or tag "
                           "(REV or REV..REV)")
    return done.stdout.strip()


def has_commits(repo: Repo) -> bool:
    done = run(repo.top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    return done is not None and done.returncode == 0
