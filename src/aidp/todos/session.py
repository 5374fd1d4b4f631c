"""Which session's TODO list a command works on when it names none."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aidp.tasklist.log import Fold
from aidp.tasklist.person import unread_session
from aidp.todos.state import personal_session


def resolve_session(explicit: str | None, root: Path, *,
                    read: Callable[[], Fold] | None) -> str:
    """--session, else AIDP_SESSION (empty counts as unset), else the person's own list
    on the git branch (`<branch>@<git identity>`; see personal_session), else the branch
    when git knows no identity, else default. `read` gives the folded tasklist when it
    is needed (a person's existing list under the bare branch name); None: nothing is
    read, and the person's own list is `<branch>@<git identity>` (what filing a task
    records: docs/todo.md, "Sessions"; tasklist.person.unread_session)."""
    session, branch, who = unread_session(explicit, root)
    if read is None or branch is None or who is None:
        return session
    return personal_session(read(), branch, who)
