"""Everything aidp asks of git above the tasklist: `sync`, `tasks changes`, and the diff
driver that shows the tasklist as readable task lines. Git runs as a subprocess,
imported when needed.

    changes.py  compare/changes_between/summary: what changed between two versions
    remote.py   sync: commit, pull with the union merge, push
    outcomes.py what sync tells: which claim won, values of yours a fast-forward replaced
    diff.py     the diff driver (textconv) and `tasks changes`' text

Running git and the person's identity are below, in aidp.tasklist (git_runner.py,
person.py: the log and the session ask them); their names are re-exported here. The
identity is read on every `todo` command (it names the default session), so it is read
from git's config files without starting git.
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
    told_lines,
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
    "told_lines",
    "verify_rev",
]
