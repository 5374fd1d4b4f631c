"""`tasks compact` through real git (issue 35, item 4): it changes what no worktree and
no later merge folds to. The property behind it, over random histories, is
tests/reliability/test_compact_fold.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def aidp(where: Path, *args: str) -> str:
    """`aidp ARGS` run in `where` as a user runs it (the root found from there)."""
    env = {k: v for k, v in os.environ.items() if k != "AIDP_DIR"}
    done = subprocess.run([sys.executable, "-m", "aidp", *args], cwd=where, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def priority(where: Path, tid: str) -> str:
    return str(json.loads(aidp(where, "tasks", "show", tid, "--json"))["priority"])


def test_compact_in_a_worktree_changes_no_worktree_s_priority(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    aidp(main, "init")
    tid = aidp(main, "tasks", "add", "Fix the login", "-p", "low", "-q").strip()
    git(main, "add", "-A")
    git(main, "commit", "-qm", "backlog")
    other = tmp_path / "other"
    git(main, "worktree", "add", "-q", "-b", "other", str(other))
    aidp(main, "tasks", "edit", tid, "-p", "high")
    aidp(main, "tasks", "start", tid)
    assert priority(main, tid) == priority(other, tid) == "high"
    aidp(main, "tasks", "compact")
    assert priority(main, tid) == priority(other, tid) == "high"  # was low in both
    aidp(other, "tasks", "note", tid, "seen from the other worktree")
    aidp(other, "tasks", "compact")  # the other worktree's file compacted too
    assert priority(main, tid) == priority(other, tid) == "high"
    # merged, and the worktree removed: the same
    git(other, "add", "-A")
    git(other, "commit", "-qm", "other's tasklist")
    git(main, "add", "-A")
    git(main, "commit", "-qm", "main's tasklist")
    git(main, "worktree", "remove", str(other))
    git(main, "merge", "-q", "--no-edit", "other")
    assert priority(main, tid) == "high"


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path]:
    """alice and bob, two clones of a bare origin, set up with `aidp init`."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    pair = []
    for who in ("alice", "bob"):
        clone = tmp_path / who
        git(tmp_path, "clone", "-q", str(origin), str(clone))
        git(clone, "config", "user.email", f"{who}@example.invalid")
        git(clone, "config", "pull.rebase", "false")
        git(clone, "checkout", "-q", "-b", "main")
        pair.append(clone)
    alice, bob = pair
    aidp(alice, "init")
    git(alice, "add", "-A")
    git(alice, "commit", "-qm", "init")
    git(alice, "push", "-q", "-u", "origin", "main")
    git(bob, "pull", "-q", "origin", "main")
    git(bob, "branch", "-q", "--set-upstream-to=origin/main")
    aidp(bob, "init")
    return alice, bob


def test_a_merge_after_compact_keeps_the_later_value(clones: tuple[Path, Path]) -> None:
    alice, bob = clones
    tid = aidp(alice, "tasks", "add", "Fix the login", "-p", "low", "-q").strip()
    aidp(alice, "sync")
    aidp(bob, "sync")
    aidp(bob, "tasks", "add", "Write the docs")  # bob's own work, pushed first
    aidp(bob, "sync")
    aidp(alice, "tasks", "edit", tid, "-p", "high")
    aidp(alice, "tasks", "start", tid)
    aidp(alice, "tasks", "compact")
    aidp(alice, "sync")  # merges bob's line into the compacted file
    aidp(bob, "sync")
    assert priority(alice, tid) == priority(bob, tid) == "high"  # was low in both
    assert json.loads(aidp(bob, "tasks", "show", tid, "--json"))["status"] == "in_progress"
