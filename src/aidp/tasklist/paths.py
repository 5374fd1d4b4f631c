"""Where the data lives: the project root and the current session.

Both are found without starting a subprocess: a command runs many times a minute.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR = ".aidp"
LOG_NAME = "tasklist.jsonl"  # the tasklist, in DATA_DIR
DEFAULT_SESSION = "default"


def locate_git(start: Path, *, ceilings: bool = False) -> tuple[Path, Path] | None:
    """(work tree top, git dir) of the repository holding `start`, if any, without
    running git. With `ceilings`, like git, the search stops below a folder named in
    GIT_CEILING_DIRECTORIES."""
    stops = ({Path(p) for p in os.environ.get("GIT_CEILING_DIRECTORIES", "").split(":") if p}
             if ceilings else set())
    for folder in (start, *start.parents):
        if folder in stops:
            return None
        dot_git = folder / ".git"
        if dot_git.is_dir():
            if not (dot_git / "HEAD").is_file():
                continue  # an empty or stray .git folder (/tmp/.git): git looks further up
            return folder, dot_git
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            try:  # a few bytes: a .git file of any size or encoding is read alike
                text = dot_git.read_bytes()[:4096].decode("utf-8", "replace").strip()
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text.partition(":")[2].strip())
                return folder, (target if target.is_absolute() else folder / target)
            return None
    return None


def _git_top(folder: Path) -> bool:
    """Whether `folder` is the top of a git work tree: it holds a repository's `.git`
    folder, or the `.git` file of a linked worktree or submodule."""
    dot_git = folder / ".git"
    if dot_git.is_dir():
        return (dot_git / "HEAD").is_file()
    return dot_git.is_file()


def find_root(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path:
    """The project root: --dir, else AIDP_DIR, else the nearest ancestor holding .aidp/
    (past the top of the git work tree only when that .aidp/ lies in no work tree
    itself), else the git work tree's top, else the working directory."""
    chosen = explicit if explicit not in (None, "") else os.environ.get("AIDP_DIR") or None
    if chosen is not None:
        path = Path(chosen).expanduser()
        # Pointing at the .aidp folder itself means its project.
        if path.name == DATA_DIR and not (path / DATA_DIR).is_dir():
            path = path.parent
        return path.absolute()
    here = (cwd or Path.cwd()).absolute()
    top: Path | None = None  # the top of the work tree `here` is in, once passed
    for folder in (here, *here.parents):
        if (folder / DATA_DIR).is_dir():
            if top is not None and locate_git(folder) is not None:
                # Another work tree's .aidp (the main worktree around Claude Code's
                # .claude/worktrees/NAME, a project around a cloned repository): a
                # repository inside another never writes the outer one's tasklist.
                return top
            return folder  # in no work tree: every repository below shares it alike
        if top is None and _git_top(folder):
            top = folder
    found = locate_git(here)
    if found is not None:
        return found[0]
    return here


def git_branch(root: Path) -> str | None:
    """The checked-out branch (also on a branch with no commits yet); None when detached."""
    found = locate_git(root)
    if found is None:
        return None
    try:
        head = (found[1] / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    prefix = "ref: refs/heads/"
    if head.startswith(prefix):
        return head[len(prefix) :] or None
    return None
