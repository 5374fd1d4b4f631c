"""Everything aidp asks of git: the person's identity, `sync`, `tasks changes`, and the
diff driver that shows the tasklist as readable task lines.

The identity is read on every `todo` command (it names the default session), so it is
read from git's config files directly, without starting git (~8 ms a call); only a
configuration this reader does not follow (include files) is asked of git itself.
Everything else runs `git` as a subprocess, imported when needed.

    runner.py   running git (GitError), the repository of a tasklist, files at a revision
    person.py   identity(): who works here, from git's config files without starting git
    changes.py  compare/changes_between/summary: what changed between two versions
    remote.py   sync: commit, pull with the union merge, push
    diff.py     the diff driver (textconv) and `tasks changes`' text
"""

from __future__ import annotations

from aidp.git.changes import changes_between, compare, summary
from aidp.git.diff import (
    DIFF_ATTRIBUTE,
    overwritten_lines,
    render_changes,
    setup_diff_driver,
    textconv,
    textconv_command,
)
from aidp.git.remote import SyncReport, sync
from aidp.tasklist.git_runner import (
    GitError,
    Repo,
    file_at,
    has_commits,
    ignores,
    repo_of,
    verify_rev,
)
from aidp.tasklist.person import identity

__all__ = [
    "DIFF_ATTRIBUTE",
    "GitError",
    "Repo",
    "SyncReport",
    "changes_between",
    "compare",
    "file_at",
    "has_commits",
    "identity",
    "ignores",
    "overwritten_lines",
    "render_changes",
    "repo_of",
    "setup_diff_driver",
    "summary",
    "sync",
    "textconv",
    "textconv_command",
    "verify_rev",
]
