"""The tasklist file and its rule: where it is, safe opens, the lock, stamps, git attributes,
what a line is, the fold and field merge, the log, repair and compact, every worktree's
tasklist, git and the person's identity."""
