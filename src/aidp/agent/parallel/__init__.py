"""`aidp run --backlog --parallel N`: agents at once, each in a worktree of its own."""
