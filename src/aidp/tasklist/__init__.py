"""The tasklist file and its rule: everything above asks the file through these modules.

    paths.py        the project root, the tasklist's name, the one walker up to a
                    repository (`locate_git`), the branch read from .git
    files.py        no-follow opens of .aidp/ files and the errors they raise
    lock.py         the write lock: the bounded wait naming its holder; the read cache's
                    short flocks, the store's descriptor leases, the turn of the one build
    stamp.py        the cache folder; which stat data of the file and of the store may be
                    trusted, and vouching for it
    attributes.py   the tasklist's git attributes: scanned without git on a read, asked of
                    `git check-attr` only when a line could apply
    line.py         what a line is: its record or damage (`admit`, the one check); reading
                    the log again where a cache says lines are (`blocks`, `read_span`,
                    `LogFile`)
    fold.py         the fold rule (which record wins, the field-level merge) and the plain
                    `Fold`
    fields.py       the task_fields record a change writes with a task; `fold_bytes`, the
                    plain fold of a file
    questions.py    the questions asked of a fold: the interface and the reference answers
                    (the store answers the same as queries: aidp.store.questions)
    log.py          `TaskLog`: the file read (through the store when one is given) and
                    appended under the lock
    maintenance.py  repair and compact, streamed; the atomic replace of the file
    setters.py      what compact keeps of a task: every record its field-level merge
                    takes a part from, so no worktree's or later merge's fold changes
    worktrees.py    every live worktree's tasklist, folded in one order; the lock in the
                    repository's common directory
    git_runner.py   running git (`run`, `Repo`, `repo_of`, `tracked`)
    person.py       the git identity, read from git's config files without starting git

Running git and the identity live here, not in aidp.git: the log and the session ask
them, and a module of aidp.git would run that package's __init__ first, which imports
what imports the log (aidp.git re-exports their names).
"""
