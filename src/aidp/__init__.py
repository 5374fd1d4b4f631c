"""aidp: a git-tracked, append-only task list for AI coding agents."""

__version__ = "0.1.0"
