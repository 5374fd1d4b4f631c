"""A folder with no `.aidp/` anywhere above it: reads say where aidp looked, and
`tasks list --exit-code` fails (exit 2) instead of passing a CI job run in the wrong
folder (docs/guide.md, "No tasklist here"). Real processes, no AIDP_DIR: aidp finds the
project itself, as in a CI job."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

NOTE = ("Note: no tasklist here: no .aidp/ folder in {where} or any folder above it; "
        "'aidp init' starts one, --dir or AIDP_DIR names another project\n")


def aidp(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "AIDP_DIR"}
    return subprocess.run([sys.executable, "-m", "aidp", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=120, env={**environ, **env})


@pytest.fixture
def nowhere(tmp_path: Path) -> Path:
    """A checkout without aidp: a git repository, and a folder inside it."""
    if any((folder / ".aidp").exists() for folder in tmp_path.parents):
        pytest.skip("a folder above the test's holds .aidp/: aidp would find it")
    repo = tmp_path / "checkout"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo / "src"


def test_exit_code_fails_where_there_is_no_tasklist(nowhere: Path) -> None:
    # The case: exit 0 and "No open tasks": a CI job in the wrong folder passed.
    for extra in ([], ["--json"], ["-f", "ids"], ["--all"]):
        result = aidp("tasks", "list", "--exit-code", *extra, cwd=nowhere)
        assert result.returncode == 2, (extra, result)
        assert result.stdout == ""
        assert result.stderr == (
            f"Error: No tasklist to check: no .aidp/ folder in {nowhere} or any folder "
            "above it; --exit-code fails rather than pass in the wrong folder ('aidp init' "
            "starts one, --dir or AIDP_DIR names another project)\n")
    # named by AIDP_DIR or --dir, a folder without .aidp/ is no tasklist either
    named = aidp("tasks", "list", "--exit-code", cwd=nowhere, AIDP_DIR=str(nowhere))
    assert named.returncode == 2
    assert f"no .aidp/ folder in {nowhere}, the folder AIDP_DIR names;" in named.stderr
    given = aidp("--dir", str(nowhere), "tasks", "list", "--exit-code", cwd=nowhere.parent)
    assert given.returncode == 2
    assert f"no .aidp/ folder in {nowhere}, the folder --dir names;" in given.stderr


def test_reads_say_where_aidp_looked_and_keep_their_output(nowhere: Path) -> None:
    note = NOTE.format(where=nowhere)
    for args, out in [
        (["tasks", "list"], "No open tasks\n"),
        (["tasks", "ready"], "Nothing ready (no open tasks)\n"),
        (["tasks", "blocked"], "Nothing blocked\n"),
        (["todo", "show"], "No active TODOs\n"),
    ]:
        result = aidp(*args, cwd=nowhere)
        assert (result.returncode, result.stdout, result.stderr) == (0, out, note), args
    # JSON keeps its contract: an empty array on stdout, the note on stderr only
    for args in (["tasks", "list", "--json"], ["tasks", "ready", "--json"]):
        result = aidp(*args, cwd=nowhere)
        assert result.returncode == 0 and json.loads(result.stdout) == [], args
        assert result.stderr == note, args
    stats = aidp("tasks", "stats", "--json", cwd=nowhere)
    assert stats.returncode == 0 and json.loads(stats.stdout)["total"] == 0
    assert stats.stderr == note
    # the note comes with the answer a read gives, never in its place
    shown = aidp("tasks", "show", "abcd", cwd=nowhere)
    assert shown.returncode == 1
    assert shown.stderr == note + "Error: Task not found: abcd\n"
    assert not (nowhere / ".aidp").exists() and not (nowhere.parent / ".aidp").exists()


def test_once_the_project_has_a_tasklist_the_check_passes_and_fails_on_work(
        nowhere: Path) -> None:
    repo = nowhere.parent
    assert aidp("init", cwd=repo).returncode == 0
    clean = aidp("tasks", "list", "--exit-code", cwd=nowhere)  # found above: the repo's
    assert (clean.returncode, clean.stdout, clean.stderr) == (0, "No open tasks\n", "")
    assert aidp("tasks", "add", "Open work", cwd=nowhere).returncode == 0
    dirty = aidp("tasks", "list", "--exit-code", "-f", "ids", cwd=nowhere)
    assert dirty.returncode == 1 and dirty.stdout.startswith("task_") and dirty.stderr == ""


def test_a_project_named_by_aidp_dir_that_filed_nothing_is_an_empty_backlog(
        nowhere: Path) -> None:
    # `aidp run` names the project for its agent; there an empty backlog is no surprise
    result = aidp("tasks", "list", cwd=nowhere, AIDP_DIR=str(nowhere))
    assert (result.returncode, result.stdout, result.stderr) == (0, "No open tasks\n", "")
