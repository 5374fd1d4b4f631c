"""Every worktree folds the same lines (issue 35, item 7): a tasklist that ends in a
whole record without its newline (an editor, a tool, a writer killed between the
record and its newline) is read alike by its own worktree and by every other one —
the line counts while no writer holds the repository's lock, and is left for later
everywhere while one does. Real git, aidp run as a user runs it."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

TASKLIST = Path(".aidp") / "tasklist.jsonl"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def aidp(where: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AIDP_DIR"}
    done = subprocess.run([sys.executable, "-m", "aidp", *args], cwd=where, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == code, (where, args, done.stdout, done.stderr)
    return done


def states(where: Path) -> dict[str, str]:
    listed = json.loads(aidp(where, "tasks", "list", "--all", "--json").stdout)
    return {task["id"]: task["status"] for task in listed}


def test_a_last_record_without_its_newline_is_folded_alike_in_every_worktree(
        tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    aidp(main, "init")
    tid = aidp(main, "tasks", "add", "Ship the release", "-q").stdout.strip()
    aidp(main, "tasks", "add", "Another task")
    git(main, "add", "-A")
    git(main, "commit", "-qm", "backlog")
    other = tmp_path / "other"
    git(main, "worktree", "add", "-q", "-b", "other", str(other))
    aidp(other, "tasks", "done", tid)
    path = other / TASKLIST
    data = path.read_bytes()
    path.write_bytes(data[:-1])  # the done record, whole, without its newline
    # no writer holds the lock: the record counts in both worktrees
    assert states(main) == states(other)
    assert states(main)[tid] == "done"
    refused = aidp(main, "tasks", "claim", tid, "--as", "ann", code=1)
    assert "done" in refused.stderr
    assert path.read_bytes() == data[:-1]
    # while a writer holds the repository's lock, the line is being written: left out
    # in both worktrees alike
    with open(main / ".git" / "aidp-tasklist.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            assert states(main) == states(other)
            assert states(other)[tid] == "pending"
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
    # the next write in the owning worktree ends the line first: nothing changes
    aidp(other, "tasks", "add", "A third task")
    assert states(main)[tid] == states(other)[tid] == "done"
