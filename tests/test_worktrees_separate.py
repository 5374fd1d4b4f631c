"""One live queue for every worktree also where the repository's git directory lives
outside its main worktree (issue 35, item 6): `git init --separate-git-dir`, and a
submodule (its git directory is in the superproject's `.git/modules/`), each with a
linked worktree. Real git; aidp run as a user runs it, its root found from the folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "protocol.file.allow=always", *args],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def aidp(where: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AIDP_DIR"}
    done = subprocess.run([sys.executable, "-m", "aidp", *args], cwd=where, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == code, (where, args, done.stdout, done.stderr)
    return done


def shown(where: Path, tid: str) -> dict:
    return dict(json.loads(aidp(where, "tasks", "show", tid, "--json").stdout))


def backlog(where: Path, count: int) -> list[str]:
    aidp(where, "init")
    ids = [aidp(where, "tasks", "add", f"task {n}", "-q").stdout.strip() for n in range(count)]
    git(where, "add", "-A")
    git(where, "commit", "-qm", "backlog")
    return ids


def one_queue(first: Path, second: Path, tid: str) -> None:
    """A claim in `first` shows in `second`, whose own claim of it is refused; and the
    other way round with the next ready task."""
    aidp(first, "tasks", "claim", tid, "--as", "ann")
    seen = shown(second, tid)
    assert (seen["status"], seen.get("assignee")) == ("in_progress", "ann")
    refused = aidp(second, "tasks", "claim", tid, "--as", "bob", code=1)
    assert "claimed by ann" in refused.stderr
    other = json.loads(aidp(second, "tasks", "claim", "--as", "bob", "--json").stdout)["id"]
    assert other != tid
    assert shown(first, other).get("assignee") == "bob"
    aidp(first, "tasks", "claim", other, "--as", "ann", code=1)


def test_a_separate_git_dir_and_its_linked_worktree_share_one_queue(tmp_path: Path) -> None:
    main = tmp_path / "main"
    git(tmp_path, "init", "-q", "-b", "main", "--separate-git-dir",
        str(tmp_path / "store.git"), str(main))
    first, _second = backlog(main, 2)
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", "-b", "linked", str(linked))
    one_queue(main, linked, first)
    # the same claims from the other side, on a fresh pair of tasks
    more = [aidp(main, "tasks", "add", f"more {n}", "-q").stdout.strip() for n in range(2)]
    aidp(linked, "tasks", "claim", more[0], "--as", "cy")
    aidp(main, "tasks", "claim", more[0], "--as", "dee", code=1)


def test_a_submodule_and_its_worktree_share_one_queue(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    first, second, _third = backlog(source, 3)
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q", "-b", "main")
    git(outer, "submodule", "add", "-q", str(source), "sub")
    git(outer, "commit", "-qm", "the submodule")
    sub = outer / "sub"
    linked = tmp_path / "sub-linked"
    git(sub, "worktree", "add", "-q", "-b", "linked", str(linked))
    # a claim that reaches the submodule's checkout through git alone (aidp has never
    # run there): the linked worktree finds it through git's core.worktree
    aidp(source, "tasks", "claim", first, "--as", "ann")
    git(source, "commit", "-qam", "claimed")
    git(sub, "pull", "-q", "origin", "main")
    assert not (outer / ".git" / "modules" / "sub" / "aidp-main-worktree").exists()
    assert shown(linked, first).get("assignee") == "ann"
    aidp(linked, "tasks", "claim", first, "--as", "bob", code=1)
    one_queue(linked, sub, second)
