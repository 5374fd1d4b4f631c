"""The tasklist under real git merges: conflict markers and union merges."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], check=check, capture_output=True, text=True)


@pytest.fixture
def repo(project: Path, cli) -> Path:
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.name", "t")
    git(project, "config", "user.email", "t@example.invalid")
    return project


def tasks_of(cli) -> dict[str, dict]:
    result = cli("tasks", "list", "--all", "--json")
    assert result.code == 0, result
    return {t["id"]: t for t in json.loads(result.out)}


def diverge(repo: Path, cli, *, union: bool) -> tuple[str, str, str]:
    """Two branches that both add a task and change a shared one."""
    if union:
        assert cli("init").code == 0
    shared = cli("tasks", "add", "Shared", "-q").out.strip()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "feature")
    theirs = cli("tasks", "add", "From feature", "-q").out.strip()
    assert cli("tasks", "done", shared).code == 0
    git(repo, "commit", "-qam", "feature")
    git(repo, "checkout", "-q", "main")
    ours = cli("tasks", "add", "From main", "-q").out.strip()
    assert cli("tasks", "start", shared).code == 0
    git(repo, "commit", "-qam", "main")
    return shared, ours, theirs


def test_conflict_markers_from_a_real_merge_lose_nothing(repo: Path, cli) -> None:
    shared, ours, theirs = diverge(repo, cli, union=False)
    merged = git(repo, "merge", "feature", check=False)
    assert merged.returncode != 0  # a real conflict, markers in the file
    text = (repo / ".aidp" / "tasklist.jsonl").read_text()
    assert "<<<<<<<" in text and ">>>>>>>" in text
    result = cli("tasks", "list", "--all", "--json")
    assert result.code == 0
    assert "damaged lines" in result.err and "aidp tasks repair" in result.err
    state = tasks_of(cli)
    assert set(state) == {shared, ours, theirs}
    # main's "start" was written after feature's "done", but from a pending it had seen:
    # a move between open states never reopens a task closed where it was not seen.
    assert state[shared]["status"] == "done"
    # writes keep working, and repair leaves the same state without damage
    assert cli("tasks", "done", ours).code == 0
    assert cli("tasks", "repair").code == 0
    after = cli("tasks", "list", "--all", "--json")
    assert after.err == "" and len(json.loads(after.out)) == 3


def test_union_merge_has_no_conflict_and_every_clone_agrees(repo: Path, cli, tmp_path: Path,
                                                            monkeypatch) -> None:
    shared, ours, theirs = diverge(repo, cli, union=True)
    assert git(repo, "merge", "-q", "--no-edit", "feature").returncode == 0
    text = (repo / ".aidp" / "tasklist.jsonl").read_text()
    assert "<<<<<<<" not in text
    merged_here = tasks_of(cli)
    assert set(merged_here) == {shared, ours, theirs}
    assert merged_here[shared]["status"] == "done"  # main's later start had not seen it

    # The other direction: a clone on feature merging main agrees on every task.
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "-b", "feature", str(repo), str(clone)], check=True)
    git(clone, "config", "user.name", "t")
    git(clone, "config", "user.email", "t@example.invalid")
    git(clone, "merge", "-q", "--no-edit", "origin/main~1")  # main before the merge commit
    monkeypatch.setenv("AIDP_DIR", str(clone))
    assert tasks_of(cli) == merged_here


def test_overwritten_names_the_same_field_changed_on_both_sides(tmp_path: Path) -> None:
    """git.changes.overwritten, without git: the quick path (both sides appended) and
    the full folds (one side rewrote its file) name the same replaced values."""
    from aidp.backlog import queue
    from aidp.backlog import tasks as backlog
    from aidp.git.changes import overwritten
    from aidp.tasklist import maintenance
    from aidp.tasklist.log import TaskLog

    logs = [TaskLog(tmp_path / name) for name in ("ours", "theirs")]
    tid = backlog.add(logs[0], "Shared", tags=["a"])["id"]
    other = backlog.add(logs[0], "Untouched")["id"]
    base = logs[0].path.read_bytes()
    logs[1].ensure_dir()
    logs[1].path.write_bytes(base)
    queue.edit(logs[0], tid, priority="high", add_tags=["mine"])
    backlog.set_status(logs[1], [other], "done")
    queue.edit(logs[1], tid, priority="low", description="Shared, renamed")  # later
    ours, theirs = (log.path.read_bytes() for log in logs)
    merged = ours + theirs[len(base):]
    found = overwritten(base, ours, theirs, merged)
    assert [(e["id"], e["field"], e["side"], e["lost"], e["kept"]) for e in found] == [
        (tid, "priority", "ours", "high", "low")]
    maintenance.compact(logs[0])  # ours no longer starts with the base: every side folded whole
    assert overwritten(base, logs[0].path.read_bytes(), theirs, merged) == found
    assert overwritten(base, ours, ours, ours) == []
