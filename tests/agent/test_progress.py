"""Progress detection: TODO list, backlog and work tree snapshots."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from aidp import todos
from aidp.agent import progress
from aidp.backlog import tasks
from aidp.tasklist.log import TaskLog


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def repo(project: Path) -> Path:
    git(project, "init", "-q", "-b", "main")
    (project / "tracked.txt").write_text("one\n", encoding="utf-8")
    git(project, "add", "tracked.txt")
    git(project, "commit", "-q", "-m", "init")
    return project


def bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_git_tree_sees_edits_new_files_staging_and_commits(repo: Path) -> None:
    states = [progress.tree_state(repo)]
    (repo / "tracked.txt").write_text("two\n", encoding="utf-8")
    states.append(progress.tree_state(repo))
    (repo / "tracked.txt").write_text("three\n", encoding="utf-8")  # modified again
    states.append(progress.tree_state(repo))
    (repo / "new.txt").write_text("n", encoding="utf-8")
    states.append(progress.tree_state(repo))
    (repo / "new.txt").write_text("nn", encoding="utf-8")  # an untracked file changes
    states.append(progress.tree_state(repo))
    git(repo, "add", "-A")
    states.append(progress.tree_state(repo))
    git(repo, "commit", "-q", "-m", "work")
    states.append(progress.tree_state(repo))
    assert None not in states
    assert len(set(states)) == len(states)
    assert progress.tree_state(repo) == states[-1]  # nothing changed: same fingerprint


def test_aidp_own_files_are_not_work(repo: Path) -> None:
    before = progress.tree_state(repo)
    tasks.add(TaskLog(repo), "filed by a signal")
    (repo / ".aidp" / "runs").mkdir()
    (repo / ".aidp" / "runs" / "t.jsonl").write_text("{}\n", encoding="utf-8")
    assert progress.tree_state(repo) == before


def test_a_project_in_a_subfolder_of_a_repo(repo: Path) -> None:
    sub = repo / "sub"
    sub.mkdir()
    before = progress.tree_state(sub)
    (repo / "outside.txt").write_text("x", encoding="utf-8")  # not below the project
    assert progress.tree_state(sub) == before
    (sub / "inside.txt").write_text("x", encoding="utf-8")
    after = progress.tree_state(sub)
    assert after != before
    bump_mtime(sub / "inside.txt")  # touched, same content: no change
    assert progress.tree_state(sub) == after
    (sub / "inside.txt").write_text("y", encoding="utf-8")
    assert progress.tree_state(sub) != after


def test_without_git_the_tree_is_not_watched(project: Path) -> None:
    assert progress.tree_state(project) is None
    (project / "file.txt").write_text("x", encoding="utf-8")
    assert progress.tree_state(project) is None


def test_changes_names_what_changed(repo: Path) -> None:
    project = repo
    log = TaskLog(project)
    first = progress.take(log, "s", project)
    assert progress.changes(first, progress.take(log, "s", project)) == []
    todos.change(log, "s", lambda t: todos.add(t, "last", "step")[0])
    second = progress.take(log, "s", project)
    assert progress.changes(first, second) == ["TODO list"]
    tasks.add(log, "a task")
    (project / "file.txt").write_text("x", encoding="utf-8")
    third = progress.take(log, "s", project)
    assert progress.changes(second, third) == ["backlog", "work tree"]
    todos.change(log, "other-session", lambda t: todos.add(t, "last", "elsewhere")[0])
    assert progress.changes(third, progress.take(log, "s", project)) == []
