"""Which session's TODO list a command works on when it names none."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from aidp.tasklist.log import Fold
from aidp.tasklist.paths import DEFAULT_SESSION, git_branch
from aidp.tasklist.person import identity
from aidp.todos.state import own_session, personal_session


def resolve_session(explicit: str | None, root: Path, *,
                    read: Callable[[], Fold] | None) -> str:
    """--session, else AIDP_SESSION (empty counts as unset), else the person's own list
    on the git branch (`<branch>@<git identity>`; see personal_session), else the branch
    when git knows no identity, else default. `read` gives the folded tasklist when it
    is needed (a person's existing list under the bare branch name); None: nothing is
    read, and the person's own list is `<branch>@<git identity>` (what filing a task
    records: docs/todo.md, "Sessions")."""
    if explicit:
        return explicit
    from_env = os.environ.get("AIDP_SESSION")
    if from_env:
        return from_env
    branch = git_branch(root)
    if branch is None:
        return DEFAULT_SESSION
    who = identity(root)
    if who is None:
        return branch
    if read is None:
        return own_session(branch, who)
    return personal_session(read(), branch, who)
