"""`tasks changes` and `aidp sync` show every record aidp writes (issue 35, item 9): a
note, a dependency, an epic link, a claim and a release — not "No changes…" while `git
status` shows the tasklist modified, nor a commit "tasklist updated" — and a record of
a kind this version does not know is shown as such. Real git, aidp as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TASKLIST = ".aidp/tasklist.jsonl"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def aidp(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "AIDP_DIR"}
    done = subprocess.run([sys.executable, "-m", "aidp", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository with two tasks committed."""
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "commit.gpgsign", "false")
    aidp(tmp_path, "init")
    first = aidp(tmp_path, "tasks", "add", "Parser", "-q").strip()
    second = aidp(tmp_path, "tasks", "add", "Docs", "-q").strip()
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "backlog")
    return tmp_path, first, second


def shown(repo: Path) -> tuple[str, dict]:
    assert git(repo, "status", "--porcelain", "--", TASKLIST).strip()  # modified
    return aidp(repo, "tasks", "changes"), json.loads(aidp(repo, "tasks", "changes", "--json"))


def synced(repo: Path) -> str:
    aidp(repo, "sync")
    return git(repo, "log", "-1", "--format=%s").strip()


@pytest.mark.parametrize(("args", "summary", "line"), [
    (("tasks", "note", "{first}", "Found the cause"), "1 note",
     "+ note      {f}  Parser: Found the cause (by "),
    (("tasks", "block", "{second}", "--on", "{first}"), "1 dependency",
     "+ blocked   {s}  Docs (waits on {f})"),
    (("tasks", "edit", "{second}", "--parent", "{first}"), "1 epic link",
     "~ epic      {s}  Docs (in epic {f})"),
], ids=["note", "dependency", "epic"])
def test_a_queue_record_alone_shows_and_is_summed_up(repo, args, summary, line) -> None:
    root, first, second = repo
    aidp(root, *(a.format(first=first, second=second) for a in args))
    text, data = shown(root)
    assert text.startswith(f"Changes since HEAD (not committed yet): {summary}\n"), text
    assert line.format(f=first[-8:][:4], s=second[-8:][:4]) in text
    assert data["summary"] == summary
    assert synced(root) == f"aidp: {summary}"


def test_an_unblock_a_claim_and_a_release(repo) -> None:
    root, first, second = repo
    aidp(root, "tasks", "block", second, "--on", first)
    assert synced(root) == "aidp: 1 dependency"
    aidp(root, "tasks", "unblock", second, "--on", first)
    text, data = shown(root)
    assert f"- unblocked {second[-8:][:4]}  Docs (no longer waits on {first[-8:][:4]})" in text
    assert data["links"][0]["removed"] is True
    assert synced(root) == "aidp: 1 dependency"
    aidp(root, "tasks", "claim", first, "--as", "ann")
    assert synced(root) == "aidp: 1 started, 1 claim"
    aidp(root, "tasks", "release", first)
    text, data = shown(root)
    assert "~ released" in text and "(was ann)" in text
    assert synced(root) == "aidp: 1 reopened, 1 release"


def test_a_record_of_an_unknown_kind_is_shown_as_such(repo) -> None:
    root, _first, _second = repo
    with (root / TASKLIST).open("a") as handle:
        handle.write('{"type":"lease_x","id":"lease_x:1","updated_at":"2026-01-01T00:00:00Z"}\n')
    text, data = shown(root)
    assert "1 'lease_x' record" in text
    assert "? record    lease_x:1: a 'lease_x' record this version does not show" in text
    assert data["other"] == [{"type": "lease_x", "record": "lease_x:1", "id": None}]
    assert synced(root) == "aidp: 1 'lease_x' record"


def test_a_change_that_folds_to_nothing_new_still_says_what_it_did(repo) -> None:
    root, first, _second = repo
    aidp(root, "tasks", "start", first)
    aidp(root, "tasks", "done", first)
    synced(root)
    aidp(root, "tasks", "compact")  # drops the start: same state, fewer lines
    text, data = shown(root)
    assert "No changes" not in text
    assert data["summary"] == "no change to any task or TODO list (2 lines removed)"
    assert synced(root) == "aidp: no change to any task or TODO list (2 lines removed)"
